"""Benchmark: the PostgreSQL store against the SQLite one (issue 31).

1. Launch per transform step: the 1,000-step transform DAG of
   bench/launch.py, launched with the SQLite journal and audit store, then
   with the PostgreSQL ones, pair by pair (medians, ratio PG/SQLite).
   Target: within 2x.
2. `audit list` with a filter over 1,000,000 records, on both stores: the
   store's `query` (what `audit list` calls) for a page of 50, median of 5,
   per filter. Target: < 200 ms.

PostgreSQL: FLIGHTDECK_BENCH_DATABASE_URL names an empty database to use;
else a throwaway cluster is started as the tests start theirs
(tests/_postgres.py: initdb/pg_ctl on loopback, fsync off; note it in the
numbers). Run with `python bench/store.py [--records N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from _paired import machine, ms, paired, save  # noqa: E402

from flightdeck.audit import AuditQuery, PostgresAuditSink, SQLiteAuditSink  # noqa: E402
from flightdeck.launch import Journal  # noqa: E402
from launch import STEPS, dag_plan  # noqa: E402

RUNS = 5
RECORDS = 1_000_000
PER_RUN = 100
PLANS = 50
KINDS = ("launch.run", "launch.action_call", "launch.output", "io.stage", "agent.tool_call")
ACTIONS = [f"acme/a{n}" for n in range(1000)]


@contextmanager
def database() -> Iterator[tuple[str, str]]:
    """A PostgreSQL URL and a note on where it came from."""
    given = os.environ.get("FLIGHTDECK_BENCH_DATABASE_URL")
    if given:
        yield given, "the server FLIGHTDECK_BENCH_DATABASE_URL names"
        return
    from tests._postgres import fresh_database, server_bin, started_cluster

    bindir = server_bin()
    if bindir is None:
        sys.exit("no PostgreSQL server binaries (apt-get install postgresql)")
    with started_cluster(bindir) as admin:
        yield fresh_database(admin), "a local PostgreSQL 15 on loopback (TCP), fsync off"


def launch_step(plan: Path, folder: Path, url: str | None, n: int) -> float:
    """Seconds per step of one launch with the SQLite files or PostgreSQL."""
    import asyncio

    from flightdeck.audit import default_sink
    from flightdeck.launch import (
        Approvals,
        HandlerInvoker,
        LaunchOptions,
        Runtime,
        SecretStore,
        StepServices,
        StepSettings,
        launch,
    )

    journal = Journal(url=url) if url else Journal(folder / "runs.sqlite3")
    if url:
        os.environ["FLIGHTDECK_DATABASE_URL"] = url
    else:
        os.environ.pop("FLIGHTDECK_DATABASE_URL", None)
    runtime = Runtime(
        StepServices(HandlerInvoker({}), SecretStore(env={})),
        journal=journal,
        audit=default_sink(),
    )
    options = LaunchOptions(
        unsigned=True,
        out_dir=folder / f"out-{n}",
        approvals=Approvals(),
        max_parallel=8,
        settings=StepSettings(),
    )
    started = time.perf_counter()
    result = asyncio.run(launch(plan, options, runtime))
    elapsed = time.perf_counter() - started
    journal.close()
    assert result.status == "completed", result.error
    return elapsed / STEPS


def _rows(count: int) -> Iterator[tuple[str, str, str, str]]:
    rng = random.Random(31)
    for n in range(count):
        run = n // PER_RUN
        seconds = n // 10  # ten records a second, oldest first
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_780_000_000 + seconds))
        if n % PER_RUN == 0:
            kind, fields = "launch.run", {"plan": f"plan-{run % PLANS}", "inputs": {}}
        else:
            kind = rng.choice(KINDS[1:])
            fields = {"ok": rng.random() > 0.1, "step": f"s{n % PER_RUN}", "ms": n % 997}
            if kind in ("launch.action_call", "agent.tool_call"):
                key = "action" if kind == "launch.action_call" else "tool"
                fields[key] = rng.choice(ACTIONS)
        yield kind, f"run-{run:06d}", stamp + f".{n % 1_000_000:06d}Z", json.dumps(fields)


def fill_sqlite(path: Path, count: int) -> float:
    sink = SQLiteAuditSink(path)
    sink.migrations()  # created, migrated
    started = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO records (kind, run_id, timestamp, fields) VALUES (?, ?, ?, ?)", _rows(count)
    )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()
    return time.perf_counter() - started


def fill_postgres(url: str, count: int) -> float:
    import psycopg

    PostgresAuditSink(url).migrations()
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.cursor().copy(
            "COPY records (kind, run_id, timestamp, fields) FROM STDIN"
        ) as copy:
            for row in _rows(count):
                copy.write_row(row)
        conn.execute("VACUUM ANALYZE records")
    return time.perf_counter() - started


def filters(count: int) -> list[tuple[str, AuditQuery]]:
    runs = count // PER_RUN
    middle = time.strftime(
        "%Y-%m-%dT%H:%M:%S", time.gmtime(1_780_000_000 + count // 20)
    )  # halfway through the records' hours
    end = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_780_000_000 + count // 20 + 3600))
    return [
        ("--run RUN (one run of 100 records)", AuditQuery(run_id=f"run-{runs // 2:06d}", limit=50)),
        (
            "--kind launch.action_call --where ok=false",
            AuditQuery(kinds=["launch.action_call"], where={"ok": "false"}, limit=50),
        ),
        ("--action ACTION (1 in ~2,500 records)", AuditQuery(action="acme/a7", limit=50)),
        ("--plan PLAN (every record of 1 run in 50)", AuditQuery(plan="plan-7", limit=50)),
        (
            "--kind launch. --since T --until T+1h (middle of the store)",
            AuditQuery(kinds=["launch."], since=middle + "Z", until=end + "Z", limit=50),
        ),
        (
            "--where step=s7 --where ms=5 (unindexed fields, rare match)",
            AuditQuery(where={"step": "s7", "ms": "5"}, limit=50),
        ),
    ]


def timed(call: Callable[[], object]) -> float:
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=RECORDS)
    parser.add_argument("--pairs", type=int, default=RUNS)
    count = parser.parse_args().records
    pairs = parser.parse_args().pairs
    host = machine()  # its load average before the run adds its own
    os.environ["FLIGHTDECK_HOME"] = tempfile.mkdtemp(prefix="fd-bench-store-")
    with tempfile.TemporaryDirectory() as tmp, database() as (url, where):
        folder = Path(tmp)
        (folder / "dag").mkdir()
        plan = dag_plan(folder / "dag")
        counter = iter(range(10**6))
        launch_step(plan, folder, url, -1)  # schema created: a first-launch cost only
        steps = paired(
            lambda: launch_step(plan, folder, None, next(counter)),
            lambda: launch_step(plan, folder, url, next(counter)),
            pairs,
        )
        sqlite_path = folder / "audit-1m.sqlite3"
        filled = {"SQLite": fill_sqlite(sqlite_path, count), "PostgreSQL": 0.0}
        audit_url = url  # the journal's tables and the audit's share one database
        filled["PostgreSQL"] = fill_postgres(audit_url, count)
        stores = {"SQLite": SQLiteAuditSink(sqlite_path), "PostgreSQL": PostgresAuditSink(url)}
        answers = []
        for label, query in filters(count):
            times = {}
            for name, sink in stores.items():
                times[name] = timed(lambda sink=sink, query=query: sink.query(query))
            found = {name: len(sink.query(query)) for name, sink in stores.items()}
            assert found["SQLite"] == found["PostgreSQL"], (label, found)
            answers.append((label, times, found["SQLite"]))
    lines = [
        "## The PostgreSQL store (issue 31)",
        "",
        f"Machine: {host}.",
        "",
        f"PostgreSQL: {where}; SQLite {sqlite3.sqlite_version}: WAL files in a temporary"
        " folder. Paired and"
        f" alternated, {pairs} pairs; medians.",
        "",
        "| measure | SQLite | PostgreSQL | PG/SQLite (median, range) | target |",
        "|---|---|---|---|---|",
        f"| launch per transform step (1,000-step DAG, journal + audit in the store)"
        f" | {steps.a_median * 1000:.3f} ms | {steps.b_median * 1000:.3f} ms"
        f" | {steps.spread()} | <= 2x |",
        "",
        f"`audit list` over {count:,} records (100 a run), a page of 50: the store's"
        f" `query`, median of {RUNS}. Loaded in {filled['SQLite']:.0f} s (SQLite, one"
        f" transaction) and {filled['PostgreSQL']:.0f} s (PostgreSQL, COPY), indexes"
        " included.",
        "",
        "| filter | matched (page) | SQLite | PostgreSQL | target |",
        "|---|---|---|---|---|",
    ]
    for label, times, found in answers:
        lines.append(
            f"| `{label}` | {found} | {ms(times['SQLite'])} | {ms(times['PostgreSQL'])}"
            " | < 200 ms |"
        )
    save("store", "\n".join(lines))


if __name__ == "__main__":
    main()
