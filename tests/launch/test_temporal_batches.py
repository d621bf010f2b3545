"""A Temporal run's journal writes ride with its steps, and a store that
refuses them costs nothing but a detour.

The workflow hands the writes it buffered (a round's `started` and
`finished` rows, its audit records) to the next step's activity, which
applies them in one transaction before the step runs. Here the PostgreSQL
store itself refuses the first and third such batches (a trigger raising on
the row that keys a batch, so the whole transaction is rolled back, as on a
lost connection): each refused step does not run, the workflow applies the
batch through its own activity, then sends the step again. The run
completes with the same rows and records as a local launch, and no step,
no write and no record happens twice. Workers and launcher each in a home
of their own, over one PostgreSQL and one Temporal dev server.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import (
    Approvals,
    Journal,
    LaunchOptions,
    RunResult,
    StepSettings,
    TemporalEngine,
    launch,
)

from . import _temporal_support as support
from ._temporal_env import dev_server
from .test_temporal import _digest_plan
from .test_temporal_sources import Fleet

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

server = pytest.fixture(scope="module")(dev_server)
QUEUE = "fd-sources"  # the queue `Fleet`'s workers serve

# Refuses the 1st and 3rd batch keys written to the database. A sequence,
# because `nextval` is not rolled back with the refused transaction.
REFUSE = """
CREATE SEQUENCE batch_inserts;
CREATE FUNCTION refuse_some() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('batch_inserts') IN (1, 3) THEN
        RAISE EXCEPTION 'refused batch %', NEW.round;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER refuse_some BEFORE INSERT ON applied_rounds
    FOR EACH ROW EXECUTE FUNCTION refuse_some();
"""


@pytest.fixture
def fleet(
    server: str, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Fleet]:
    import psycopg

    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    Journal().runs()  # the store's migrations, so the trigger has its table
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(REFUSE)  # type: ignore[arg-type]
    running = Fleet(server, tmp_path)
    yield running
    running.stop()


def _launch(plan: Path, out: Path, home: Path, engine: Any = None) -> RunResult:
    home.mkdir(exist_ok=True)
    options = LaunchOptions(
        unsigned=True,
        out_dir=out,
        settings=StepSettings(retry_base_delay=0.0),
        approvals=Approvals.build(["file"]),
    )
    changes = {} if engine is None else {"engine": engine}
    return asyncio.run(launch(plan, options, support.runtime(home, **changes)))


def _shape(run_id: str) -> tuple[list[Any], Counter[str]]:
    from flightdeck.audit import default_sink

    rows = [(r.step_id, r.status, r.attempts, r.result) for r in Journal().steps(run_id)]
    return sorted(rows, key=str), Counter(r.kind for r in default_sink().records(run_id=run_id))


def test_refused_batches_are_applied_once_and_their_steps_run_once(
    fleet: Fleet, tmp_path: Path, pg_url: str
) -> None:
    import psycopg

    plan = _digest_plan(tmp_path / "plan")
    engine = TemporalEngine(fleet.address, QUEUE, heartbeat_timeout=support.HEARTBEAT_TIMEOUT)
    remote = _launch(plan, tmp_path / "out", fleet.launcher_home, engine)
    assert remote.status == "completed", remote.to_dict()
    with psycopg.connect(pg_url) as conn:
        (inserts,) = conn.execute("SELECT last_value FROM batch_inserts").fetchone() or (0,)
    assert inserts >= 4  # both refusals happened, and their batches went in after
    local = _launch(plan, tmp_path / "out-local", tmp_path / "local")
    assert local.status == "completed"
    assert _shape(remote.run_id) == _shape(local.run_id)
    steps = ("fetch", "file")
    calls = {
        s: [p for w in fleet.root.glob("worker-*") for p in w.glob(f"calls/{remote.run_id}.{s}/*")]
        for s in steps
    }
    assert {s: len(found) for s, found in calls.items()} == {"fetch": 1, "file": 1}
    assert (tmp_path / "out" / "digest.csv").read_text() == (
        tmp_path / "out-local" / "digest.csv"
    ).read_text()
