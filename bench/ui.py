"""Benchmark: `flightdeck ui` page loads over a store of 10,000 runs.

A data directory is filled the way launches fill it: 10,000 runs in the
journal (3 steps each, one output) and 40,000 audit records (4 per run),
through `flightdeck.launch.Journal` and the SQLite audit store. Each page is
then requested through the ASGI app in process (Starlette's test client), so
the time is the server's: routing, the token check, the read-only SQLite
queries and the template, without a network or a browser. Target: every
page under 200 ms at the median. Medians of 15 requests after 2 warm-ups.
Run with `make bench` or `python bench/ui.py`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from _paired import RESULTS, machine

from flightdeck.audit import AuditRecord, SQLiteAuditSink
from flightdeck.launch import Journal
from flightdeck.ui import UiConfig, create_app

RUNS = 10_000
REPEAT = 15
STATUSES = ("completed", "completed", "completed", "failed", "pending-approval")


def fill(data: Path) -> str:
    journal = Journal(data / "runs.sqlite3")
    with journal.batch():
        for n in range(RUNS):
            run_id = f"run-20260101T{n:06d}-{n:06x}"
            journal.create_run(
                run_id,
                plan_name=f"plan-{n % 20}",
                plan_path="/nowhere/SKILL.md",
                content_hash="sha256:" + f"{n % 20:064x}",
                launch_time="2026-01-01T00:00:00Z",
                inputs={"window_days": n % 30},
                options={},
            )
            for step in ("fetch", "summarise", "publish"):
                journal.step_started(run_id, step, "action-call", "not-required")
                journal.step_finished(
                    run_id, step, "action-call", "completed", attempts=1, result={"n": n}
                )
            journal.output(
                run_id,
                {"name": "digest.md", "mime_type": "text/markdown", "sha256": "0" * 64, "bytes": 5},
                "# hi\n",
            )
            journal.set_run_status(run_id, STATUSES[n % len(STATUSES)])
    journal.close()
    sink = SQLiteAuditSink(data / "audit.sqlite3")
    conn = sink._connect()  # one transaction for the fill, not 40,000 commits
    conn.execute("BEGIN")
    for n in range(RUNS):
        run_id = f"run-20260101T{n:06d}-{n:06x}"
        sink.record(AuditRecord("launch.run", run_id, {"plan": f"plan-{n % 20}"}))
        for step in ("fetch", "summarise", "publish"):
            fields = {"step": step, "action": "aileron:x.y", "effect": "read", "host": "api.x"}
            sink.record(AuditRecord("launch.action_call", run_id, fields))
    conn.execute("COMMIT")
    sink.close()
    return f"run-20260101T{RUNS // 2:06d}-{RUNS // 2:06x}"


def main() -> None:
    from starlette.testclient import TestClient

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        start = time.perf_counter()
        middle = fill(data)
        filled = time.perf_counter() - start
        config = UiConfig(data=data)
        client = TestClient(create_app(config), base_url="http://127.0.0.1")
        assert client.get(f"/runs?token={config.secrets.token}").status_code == 200
        pages = [
            ("runs list, newest 50", "/runs"),
            ("runs list, status filter", "/runs?status=failed"),
            ("runs list, search", "/runs?q=plan-7"),
            ("runs list, page 150", "/runs?page=150"),
            ("one run", f"/runs/{middle}"),
            ("audit, newest 500", "/audit"),
            ("audit, one run", f"/audit?run={middle}"),
            ("audit, field filter", "/audit?kind=launch.run&where=plan=plan-3"),
        ]
        lines = [
            "## `flightdeck ui` page loads (`bench/ui.py`)",
            "",
            f"{RUNS:,} runs (3 steps, 1 output each), {RUNS * 4:,} audit records, filled in"
            f" {filled:.1f} s. Each page requested in process through the ASGI app (the"
            f" server's time, no network); median and slowest of {REPEAT} after 2 warm-ups."
            " Target: < 200 ms.",
            "",
            f"Machine: {machine()}",
            "",
            "| page | median | slowest |",
            "|---|---|---|",
        ]
        for label, path in pages:
            times = []
            for i in range(REPEAT + 2):
                began = time.perf_counter()
                response = client.get(path)
                took = time.perf_counter() - began
                assert response.status_code == 200, (path, response.status_code)
                if i >= 2:
                    times.append(took * 1000)
            lines.append(f"| {label} | {statistics.median(times):.1f} ms | {max(times):.1f} ms |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ui.md").write_text(text, "utf-8")


if __name__ == "__main__":
    main()
