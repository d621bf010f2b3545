"""What a Temporal worker writes per scheduling round, on both backends: the
round's audit records are written exactly once, and on PostgreSQL they
commit with the round's journal rows (one transaction, one pipeline), so
another connection sees neither before the round ends. A connection the
server ended while it sat idle in the pool is replaced, not handed out."""

from __future__ import annotations

from typing import Any

import pytest

from flightdeck.audit import default_sink
from flightdeck.launch import Journal
from flightdeck.launch.engine._audit import AuditRouter
from flightdeck.launch.engine._runtime import Runtime
from flightdeck.launch.temporal._worker import apply_batch, apply_ops


def _round(run_id: str) -> list[dict[str, Any]]:
    return [
        {"op": "audit", "run_id": run_id, "kind": "launch.action_call", "fields": {"n": 1}},
        {"op": "step_started", "run_id": run_id, "step_id": "a", "kind": "action"}
        | {"approval": None},
        {"op": "step_finished", "run_id": run_id, "step_id": "a", "kind": "action"}
        | {"status": "completed", "attempts": 1, "result": {"v": 1}}
        | {"error": None, "approval": None},
        {"op": "audit", "run_id": run_id, "kind": "launch.step", "fields": {"n": 2}},
    ]


def test_a_rounds_audit_records_are_written_once_with_its_rows(backend: str) -> None:
    journal, sink = Journal(), default_sink()
    router = AuditRouter(sink, journal=journal)
    runtime = Runtime(services=None, journal=journal, audit=sink)  # type: ignore[arg-type]
    apply_ops(runtime, router, _round("r1"))
    assert [(r.kind, r.fields) for r in sink.records(run_id="r1")] == [
        ("launch.action_call", {"n": 1}),
        ("launch.step", {"n": 2}),
    ]
    assert [(row.step_id, row.status) for row in Journal().steps("r1")] == [("a", "completed")]


def test_a_batch_sent_again_is_applied_once(backend: str) -> None:
    """A step retried on another worker brings its run's batch again: the
    batch's key committed with its writes, so the retry writes nothing."""
    journal, sink = Journal(), default_sink()
    router = AuditRouter(sink, journal=journal)
    runtime = Runtime(services=None, journal=journal, audit=sink)  # type: ignore[arg-type]
    batch = {"run_id": "r1", "key": "exec-1/1", "ops": _round("r1")}
    assert not journal.round_applied("r1", "exec-1/1")
    apply_batch(runtime, router, batch, again=False)
    assert journal.round_applied("r1", "exec-1/1")
    apply_batch(runtime, router, batch, again=True)
    kinds = [r.kind for r in sink.records(run_id="r1")]
    assert kinds == ["launch.action_call", "launch.step"]
    # The next batch, and one of another run under the same key, are new.
    audit = {"op": "audit", "kind": "launch.finish", "fields": {}}
    apply_batch(
        runtime, router, batch | {"key": "exec-1/2", "ops": [audit | {"run_id": "r1"}]}, again=True
    )
    apply_batch(
        runtime, router, {"run_id": "r2", "key": "exec-1/1", "ops": _round("r2")}, again=True
    )
    assert [r.kind for r in sink.records(run_id="r1")] == [*kinds, "launch.finish"]
    assert [r.kind for r in sink.records(run_id="r2")] == kinds
    assert not journal.round_applied("r1", "exec-2/1")  # a resumed run's own execution


# The first batch key written holds its row, uncommitted, for a second.
_STALL = """
CREATE SEQUENCE key_inserts;
CREATE FUNCTION stall_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('key_inserts') = 1 THEN PERFORM pg_sleep(1); END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER stall_first AFTER INSERT ON applied_rounds
    FOR EACH ROW EXECUTE FUNCTION stall_first();
"""


def test_two_attempts_applying_one_batch_at_once_write_it_once(
    pg_url: str, monkeypatch: Any
) -> None:
    """A worker stalled inside a batch's transaction misses its heartbeats;
    Temporal retries the step on another worker, which brings the same
    batch while the first transaction is still open. The second waits on
    the key, finds it taken when the first commits, and writes nothing."""
    import threading

    import psycopg

    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    Journal().runs()  # the journal's tables, for the trigger
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(_STALL)  # type: ignore[arg-type]
    batch = {"run_id": "r1", "key": "exec-1/1", "ops": _round("r1")}

    def attempt(again: bool) -> None:
        journal, sink = Journal(), default_sink()  # a worker of its own
        runtime = Runtime(services=None, journal=journal, audit=sink)  # type: ignore[arg-type]
        apply_batch(runtime, AuditRouter(sink, journal=journal), batch, again=again)

    stalled = threading.Thread(target=attempt, args=(False,))
    stalled.start()
    with psycopg.connect(pg_url) as conn:  # wait until the first holds the key
        while not conn.execute(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
        ).fetchone():
            conn.commit()
    attempt(True)  # the retry, while the first is still open
    stalled.join()
    kinds = [r.kind for r in default_sink().records(run_id="r1")]
    assert kinds == ["launch.action_call", "launch.step"]
    assert [(row.step_id, row.status) for row in Journal().steps("r1")] == [("a", "completed")]


def test_a_record_written_in_a_round_commits_with_it(pg_url: str, monkeypatch: Any) -> None:
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    journal, sink = Journal(), default_sink()
    router = AuditRouter(sink, journal=journal)
    with journal.batch():
        journal.step_started("r1", "a", "action", None)
        router.write("r1", "launch.step", {"n": 1})
        assert sink.records(run_id="r1") == []  # another connection: not yet
    assert [r.kind for r in sink.records(run_id="r1")] == ["launch.step"]
    router.write("r1", "launch.finish", {})  # outside a round: written at once
    assert [r.kind for r in sink.records(run_id="r1")] == ["launch.step", "launch.finish"]


def test_a_connection_the_server_ended_is_not_handed_out(pg_url: str, monkeypatch: Any) -> None:
    import psycopg

    from flightdeck.config._database import pool

    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    journal = Journal()
    journal.step_started("r1", "a", "action", None)
    with pool(pg_url).connection() as conn:
        mine = conn.info.backend_pid
    # End every other session of the database, waiting until each has ended.
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert [row.step_id for row in journal.steps("r1")] == ["a"]
    with pool(pg_url).connection() as conn:
        assert conn.info.backend_pid != mine


def test_a_block_the_store_refuses_keeps_none_of_its_writes(backend: str) -> None:
    """The rows written before the refused one are rolled back with it, on
    SQLite as PostgreSQL does: a batch is applied whole or not at all."""
    journal = Journal()
    journal.mark_round("r1", "exec-1/1")
    with pytest.raises(Exception), journal.batch():  # noqa: B017 (sqlite3's or the store's)
        journal.step_started("r1", "a", "action", None)
        journal.mark_round("r1", "exec-1/1")  # taken: refused
    assert Journal().steps("r1") == []
    journal.step_started("r1", "b", "action", None)  # the journal goes on
    assert [row.step_id for row in Journal().steps("r1")] == ["b"]
