"""kill -9 at 30+ random points of a launch with idempotent and
non-idempotent writes, then as many resumes as it takes (issue 12, "Done
when"): no completed step is lost or run again, and no non-idempotent write
is repeated without an operator decision.

The campaign itself is tests/launch/_crash_campaign.py (forked children, a
simulated operator); this file builds the workspace and checks the report.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ._ledger_plan import IDEMPOTENT, NON_IDEMPOTENT, ledger_plan
from .test_cli_resume import ROOT, TOOL

KILLS = 32
DRIVER = """---
name: Ledger
id: ledger
description: A test ledger that counts its writes.
version: 1.0.0
kind: sdk
package: crashledger
package_manager: local
import_style: python
install:
  - { method: vendored, path: ../../packages/crashledger }
network:
  egress: []
implements:
  - tool: ../../.tools/append/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk: { function_ref: "record", args_template: { text: "${input.text}" } }
  - tool: ../../.tools/put/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk: { function_ref: "record", args_template: { text: "${input.text}" } }
---
"""
# One line per write in writes.log: the side file the test counts. KILL_AT
# (`STEP:before|after`) kills the launch process itself around the write.
PACKAGE = """
import os, signal, time

def _point(where, text):
    if os.environ.get("KILL_AT") == text + ":" + where:
        os.kill(os.getpid(), signal.SIGKILL)

def record(text):
    _point("before", text)
    time.sleep(float(os.environ.get("STEP_SECONDS", "0")))
    fd = os.open(os.environ["LEDGER_DIR"] + "/writes.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (text + "\\n").encode())
    os.fsync(fd)
    os.close(fd)
    _point("after", text)
    time.sleep(float(os.environ.get("STEP_SECONDS", "0")))
    return {"text": text}
"""


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    for tool in ("append", "put"):
        (ws / ".tools" / tool).mkdir(parents=True)
        text = TOOL.format(name=tool, id=tool).replace("{ text: {} }", "{ text: {}, after: {} }")
        (ws / ".tools" / tool / "TOOL.md").write_text(text)
    (ws / ".drivers" / "ledger").mkdir(parents=True)
    (ws / ".drivers" / "ledger" / "DRIVER.md").write_text(DRIVER)
    (ws / "packages" / "crashledger").mkdir(parents=True)
    (ws / "packages" / "crashledger" / "__init__.py").write_text(PACKAGE)
    plan = ledger_plan(ws)
    return ws, plan


def _campaign(tmp_path: Path, ws: Path, plan: Path) -> list[dict[str, Any]]:
    config = {
        "seed": 12,
        "kills": KILLS,
        "plan": str(plan),
        "workspace": str(ws),
        "scratch": str(tmp_path / "campaign"),
        "step_seconds": 0.01,
        "run_seconds": 0.4,  # random delays cover start-up, every step and the end
        "max_processes": 40,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    done = subprocess.run(
        [sys.executable, "-m", "tests.launch._crash_campaign", str(tmp_path / "config.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,  # -m puts it on sys.path; PYTHONPATH (if any) is kept
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def test_kill9_at_30_random_points_loses_nothing_and_repeats_no_write(
    tmp_path: Path, backend: str
) -> None:
    """On the SQLite journal, then on PostgreSQL (FLIGHTDECK_DATABASE_URL
    reaches every forked launch and resume)."""
    ws, plan = _workspace(tmp_path)
    campaigns = _campaign(tmp_path, ws, plan)
    processes = [p for c in campaigns for p in c["processes"]]
    assert sum(p["killed"] for p in processes) >= 30
    # About one process in six is killed around a non-idempotent write, so
    # the operator had to decide at least once (the odds otherwise: ~e^-10).
    assert any(p.get("decided") in NON_IDEMPOTENT for p in processes)
    for process in processes:  # a process that was not killed ends in a code, never a traceback
        if not process["killed"]:
            assert "Traceback" not in process["stderr"], process["stderr"]
    for record in campaigns:
        assert record.get("completed"), record["processes"][-1]
        final = record["snapshots"][-1]
        assert final["statuses"] == dict.fromkeys(("w1", "i1", "w2", "i2"), "completed")
        # The operator retried only steps whose write was absent, so exactly
        # one write each: a second one would be a write repeated undecided.
        for step in NON_IDEMPOTENT:
            assert final["writes"][step] == 1, (step, record["processes"])
        for step in IDEMPOTENT:
            assert final["writes"][step] >= 1
        # A step once journaled completed stays completed and never runs again.
        for index, snapshot in enumerate(record["snapshots"]):
            for step, status in snapshot["statuses"].items():
                if status != "completed":
                    continue
                for later in record["snapshots"][index:]:
                    assert later["statuses"][step] == "completed", (step, index)
                    assert later["writes"][step] == snapshot["writes"][step], (step, index)
        published = json.loads((Path(record["ledger"]) / "out" / "done.json").read_text())
        assert published == {"text": "i2"}
