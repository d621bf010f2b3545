"""The run journal's behaviour, once on SQLite and once on PostgreSQL (the
`backend` fixture): what one process writes another reads, a batch commits
together, the migration history is the same, two writers at once lose
nothing, and one process walks a run at a time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import Journal, LaunchError
from flightdeck.launch.engine import _journal_schema
from flightdeck.launch.engine._run_lock import run_lock


def _new_run(journal: Journal, run_id: str, **extra: Any) -> None:
    journal.create_run(
        run_id,
        plan_name="p",
        plan_path="/p/SKILL.md",
        content_hash="sha256:x",
        launch_time="2026-01-01T00:00:00Z",
        inputs={"n": 1, "text": "é"},
        options={"out_dir": "/out"},
        **extra,
    )


def _seen(run_id: str) -> list[str]:
    """The step ids another journal (another process's) reads now."""
    other = Journal()
    try:
        return sorted(row.step_id for row in other.steps(run_id))
    finally:
        other.close()


def test_a_run_round_trips_and_another_journal_reads_it(backend: str) -> None:
    journal = Journal()
    _new_run(journal, "r1", executor="temporal", cluster={"address": "t:7233"})
    journal.set_run_status("r1", "failed", {"code": "step.failed", "message": "x"})
    journal.step_started("r1", "a", "action", None)
    journal.step_finished("r1", "a", "action", "completed", attempts=2, result={"v": [1, 2]})
    journal.output("r1", {"name": "o", "mime_type": "text/plain", "sha256": "s", "bytes": 3}, "x")
    journal.close()
    other = Journal()
    row = other.run("r1")
    assert row is not None
    assert (row.inputs, row.options, row.status) == (
        {"n": 1, "text": "é"},
        {"out_dir": "/out"},
        "failed",
    )
    assert (row.executor, row.cluster, row.error) == (
        "temporal",
        {"address": "t:7233"},
        {"code": "step.failed", "message": "x"},
    )
    (step,) = other.steps("r1")
    assert (step.status, step.attempts, step.result) == ("completed", 2, {"v": [1, 2]})
    assert other.outputs("r1")[0]["bytes"] == 3
    assert other.run("nope") is None
    other.close()


def test_a_worker_s_source_reads_complete_the_run_s_inputs(backend: str) -> None:
    """A Temporal run's source inputs are written after its row (`set_run_inputs`)."""
    journal = Journal()
    _new_run(journal, "r1")
    journal.set_run_inputs("r1", {"n": 1, "text": "é", "region": "eu-west"})
    journal.close()
    other = Journal()
    row = other.run("r1")
    assert row is not None and row.inputs == {"n": 1, "text": "é", "region": "eu-west"}
    other.close()


def test_runs_are_listed_newest_first(backend: str) -> None:
    journal = Journal()
    for n in range(3):
        _new_run(journal, f"r{n}")
    assert [row.run_id for row in journal.runs(limit=2)] == ["r2", "r1"]
    journal.close()


def test_a_batch_commits_together_at_its_end_even_when_it_raises(backend: str) -> None:
    journal = Journal()
    with journal.batch():
        journal.step_started("r1", "a", "transform", None)
        journal.step_finished("r1", "b", "transform", "completed")
        assert _seen("r1") == []  # one transaction: nothing visible yet
    assert _seen("r1") == ["a", "b"]
    with pytest.raises(RuntimeError), journal.batch():
        journal.step_finished("r1", "c", "transform", "completed")
        with journal.batch():  # nested: joins the outer transaction
            journal.step_started("r1", "d", "transform", None)
        raise RuntimeError("a bug in the round")
    assert _seen("r1") == ["a", "b", "c", "d"]
    journal.close()


def test_a_read_inside_a_batch_sees_its_writes_in_order(backend: str) -> None:
    journal = Journal()
    with journal.batch():
        journal.step_started("r1", "b", "transform", None)
        journal.step_finished("r1", "a", "transform", "completed", result=1)
        assert [row.step_id for row in journal.steps("r1")] == ["b", "a"]
        assert _seen("r1") == []  # still one transaction
        journal.step_finished("r1", "b", "transform", "completed", result=2)
    rows = journal.steps("r1")
    assert [(row.step_id, row.status, row.result) for row in rows] == [
        ("b", "completed", 2),
        ("a", "completed", 1),
    ]
    assert rows[0].finished_at == rows[1].finished_at  # the block's one timestamp
    journal.close()


def test_a_replaced_output_moves_to_the_end(backend: str) -> None:
    journal = Journal()
    record = {"mime_type": "text/plain", "sha256": "s", "bytes": 1}
    for name in ("x", "y", "x"):
        journal.output("r1", {**record, "name": name}, None)
    assert [o["name"] for o in journal.outputs("r1")] == ["y", "x"]
    journal.close()


def test_both_backends_keep_the_same_migration_history() -> None:
    assert [name for name, _ in _journal_schema.MIGRATIONS] == [
        name for name, _ in _journal_schema.POSTGRES_MIGRATIONS
    ]


def test_two_writers_at_once_lose_no_row(backend: str) -> None:
    """Two launchers' journals (separate connections) writing rounds of the
    same run and of their own runs at once: every row lands, each once."""
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        journal = Journal()
        try:
            _new_run(journal, f"run-{name}")
            for n in range(40):
                with journal.batch():
                    journal.step_started("shared", f"{name}-{n}", "transform", None)
                    journal.step_finished("shared", f"{name}-{n}", "transform", "completed")
                    journal.step_started(f"run-{name}", f"s{n}", "transform", None)
                    # Both touch one row too: the last finish wins, whole.
                    journal.step_finished("shared", "common", "transform", "completed", result=n)
        except BaseException as exc:  # reported below, with the thread's name
            errors.append(exc)
        finally:
            journal.close()

    # Created first: two connections creating a new SQLite file at the same
    # instant can see "database is locked" from its switch to WAL (a
    # first-use race of the file, not of writing, which this test is about).
    Journal().runs()
    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    journal = Journal()
    shared = {row.step_id: row for row in journal.steps("shared")}
    assert len(shared) == 81
    assert shared["common"].result == 39
    assert all(row.status == "completed" for row in shared.values())
    assert len(journal.steps("run-a")) == len(journal.steps("run-b")) == 40
    journal.close()


def test_one_process_walks_a_run_at_a_time(backend: str) -> None:
    first, second = Journal(), Journal()
    with run_lock(first, "r1"):
        with pytest.raises(LaunchError) as refused, run_lock(second, "r1"):
            pass
        assert refused.value.code == "resume.running"
        with run_lock(second, "r2"):  # another run is free
            pass
    with run_lock(second, "r1"):  # released with the block
        pass
    first.close()
    second.close()


def test_a_process_walking_more_runs_than_its_pool_holds_still_writes(backend: str) -> None:
    """An embedder's concurrent launches in one process: each walk holds its
    run's lock for the walk, and with more walks than the pool's connections
    the journal must still be written (the locks hold no pooled connection)."""
    from contextlib import ExitStack

    journal = Journal()
    with ExitStack() as walks:
        for n in range(12):  # the pool holds 8
            walks.enter_context(run_lock(journal, f"r{n}"))
        _new_run(journal, "r0")
        journal.step_finished("r0", "a", "transform", "completed", result=1)
        assert [row.step_id for row in journal.steps("r0")] == ["a"]
    journal.close()


def test_lock_connections_are_reused_and_handed_back_unlocked(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launch's run lock takes a pooled session, not a new one (a new
    server session per launch was most of what PostgreSQL added to a short
    launch); a session goes back to the pool holding no lock, even one a
    walk failed to release, so the next walk on it cannot take a run that
    another process walks (advisory locks are re-entrant per session)."""
    import psycopg

    from flightdeck.config._database import lock_pool

    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    journal = Journal()

    def walks(count: int) -> int:
        for n in range(count):
            with run_lock(journal, f"r{n}"):
                pass
        return int(lock_pool(pg_url).get_stats()["connections_num"])  # sessions opened

    opened = walks(2)
    assert walks(5) == opened <= 2  # five more launches, no new session
    key = "flightdeck.run:r9"
    with lock_pool(pg_url).connection() as conn:  # a walk that never unlocked
        conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
    with psycopg.connect(pg_url, autocommit=True) as other:
        row = other.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
        ).fetchone()
        assert row == (True,)  # released when the session went back
        with pytest.raises(LaunchError) as refused, run_lock(journal, "r9"):
            pass
        assert refused.value.code == "resume.running"


def test_a_store_that_is_down_is_a_located_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "FLIGHTDECK_DATABASE_URL", "postgresql://fd:s3cret@127.0.0.1:1/flightdeck?connect_timeout=2"
    )
    journal = Journal()
    with pytest.raises(LaunchError) as caught:
        journal.runs()
    assert caught.value.code == "database.unreachable"
    assert "127.0.0.1:1" in caught.value.message and "s3cret" not in caught.value.message
    assert journal.location == "postgresql://fd:***@127.0.0.1:1/flightdeck?connect_timeout=2"


def test_a_store_url_that_is_not_postgresql_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", "mysql://fd:s3cret@db/x")
    with pytest.raises(LaunchError) as caught:
        Journal().runs()
    assert caught.value.code == "database.bad_url"
    assert "s3cret" not in caught.value.message


def test_a_broken_config_file_is_a_journal_error_at_first_use(fd_home: Path) -> None:
    (fd_home / "config").mkdir(parents=True, exist_ok=True)
    (fd_home / "config" / "config.toml").write_text("[store\n")
    journal = Journal()  # constructing reads nothing
    with pytest.raises(LaunchError) as caught:
        journal.runs()
    assert caught.value.code == "config.invalid"
    (fd_home / "config" / "config.toml").write_text("store = 3\n")
    with pytest.raises(LaunchError) as caught:
        Journal().runs()
    assert caught.value.code == "config.invalid"


def test_a_deadlocked_round_is_replayed_whole_on_postgresql(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rounds writing the same two rows in opposite orders, each holding
    its first row when it writes the second: PostgreSQL aborts one as a
    deadlock (40P01); its writes are replayed in a new transaction, and both
    rounds land whole."""
    from flightdeck.launch.engine import _journal_pg

    both_hold = threading.Barrier(2, timeout=30)
    errors: list[BaseException] = []
    seen: list[str | None] = []
    retryable = _journal_pg._retryable

    def spy(exc: BaseException) -> bool:
        seen.append(getattr(exc, "sqlstate", None))
        return retryable(exc)

    monkeypatch.setattr(_journal_pg, "_retryable", spy)

    def round_(first: str, second: str, result: int) -> None:
        journal = Journal(url=pg_url)
        try:
            with journal.batch():
                journal.step_finished("r1", first, "transform", "completed", result=result)
                journal.steps("r1")  # a read drains the write: the row is held now
                both_hold.wait()
                journal.step_finished("r1", second, "transform", "completed", result=result)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            journal.close()

    Journal(url=pg_url).runs()  # migrated before the race
    threads = [
        threading.Thread(target=round_, args=("a", "b", 1)),
        threading.Thread(target=round_, args=("b", "a", 2)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert "40P01" in seen, seen  # the deadlock happened, and was replayed
    rows = {row.step_id: row.result for row in Journal(url=pg_url).steps("r1")}
    assert rows in ({"a": 1, "b": 1}, {"a": 2, "b": 2})  # one round after the other, whole
