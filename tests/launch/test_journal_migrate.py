"""Issue 28: the journal records each run's executor, through a migration
that is safe for the journals written before it.

Old rows keep an unknown executor (never `local`: an old Temporal run must
not be resumed here because of a default), and processes that open an old
journal at once (a launcher and its workers sharing a data directory) apply
the migration once between them.
"""

from __future__ import annotations

import linecache
import sqlite3
import sys
import threading
import time
from pathlib import Path

from flightdeck.config import statements
from flightdeck.launch import Journal
from flightdeck.launch.engine import _journal_schema

OLD_ROW = (
    "INSERT INTO runs (run_id, plan_name, plan_path, content_hash, status, started_at,"
    " launch_time, inputs, options) VALUES ('run-old', 'p', '/p/SKILL.md', 'sha256:x',"
    " 'interrupted', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '{}', '{}')"
)


def _old_journal(path: Path) -> None:
    """A journal as the releases before executors were recorded wrote it."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    name, sql = _journal_schema.MIGRATIONS[0]
    assert name == "0001_runs"
    conn.executescript(f"BEGIN; {sql}; INSERT INTO _migrations VALUES ('{name}', 'then'); COMMIT;")
    conn.execute(OLD_ROW)
    conn.close()


def _columns(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[1] for row in conn.execute("PRAGMA table_info(runs)")]


def test_old_runs_keep_an_unknown_executor(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _old_journal(path)
    journal = Journal(path)
    old = journal.run("run-old")
    assert old is not None and old.executor is None and old.cluster is None
    assert old.to_dict()["executor"] is None
    journal.create_run(
        "run-new",
        plan_name="p",
        plan_path="/p",
        content_hash=None,
        launch_time="t",
        inputs={},
        options={},
        executor="temporal",
        cluster={"address": "a:1", "namespace": "default"},
    )
    new = journal.run("run-new")
    assert new is not None and new.executor == "temporal"
    assert new.cluster == {"address": "a:1", "namespace": "default"}
    journal.close()
    # The old columns are where they were (readers of older releases name
    # them); the new ones come after.
    assert _columns(path)[-2:] == ["executor", "cluster"]
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == [name for name, _ in _journal_schema.MIGRATIONS]


def _blocked_in_journal(thread: threading.Thread) -> bool:
    """The thread waits for the write lock inside the journal's open: its
    innermost frame, in the journal's modules or the migration they use
    (`config/_sqlite.py`), is on a statement that takes it, and stays there."""
    seen = set()
    for _ in range(5):
        frame = sys._current_frames().get(thread.ident or -1)
        where = Path(frame.f_code.co_filename) if frame is not None else None
        # The journal's migrations run through the SQLite stores' shared one.
        if where is None or not (
            "_journal" in where.name or where.parts[-2:] == ("config", "_sqlite.py")
        ):
            return False
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        if "executescript" not in line and "BEGIN IMMEDIATE" not in line:
            return False
        seen.add((frame.f_code.co_name, frame.f_lineno))
        time.sleep(0.05)
    return len(seen) == 1


def test_processes_opening_an_old_journal_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _old_journal(path)
    # Another process holds the write lock and is migrating the journal.
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    outcome: list[object] = []

    def open_journal() -> None:
        try:
            outcome.append(Journal(path).run("run-old"))
        except Exception as exc:  # reported below, with its code
            outcome.append(exc)

    thread = threading.Thread(target=open_journal)
    thread.start()
    deadline = time.monotonic() + 30
    while not _blocked_in_journal(thread):
        assert time.monotonic() < deadline, "the journal never waited for the lock"
        time.sleep(0.01)
    name, sql = _journal_schema.MIGRATIONS[1]
    for statement in statements(sql):
        other.execute(statement)
    other.execute("INSERT INTO _migrations VALUES (?, 'now')", (name,))
    other.execute("COMMIT")
    other.close()
    thread.join(timeout=60)
    [row] = outcome
    assert not isinstance(row, Exception), row  # not journal.unusable (duplicate column)
    assert row is not None and getattr(row, "executor", "?") is None


def test_an_old_run_resumed_records_the_executor_that_walked_it(tmp_path: Path) -> None:
    from tests.launch.conftest import Harness, contract, write_plan

    harness = Harness(tmp_path)
    harness.handlers["m.w"] = lambda call: {"v": 1}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.w": contract(effect="write")},
        steps=[{"id": "w", "kind": "action-call", "actionRef": "aileron:m.w"}],
    )
    paused = harness.run(plan)
    assert paused.status == "pending-approval"
    with sqlite3.connect(harness.journal.path) as conn:  # as an older release left it
        conn.execute("UPDATE runs SET executor = NULL, cluster = NULL")
    old = harness.journal.run(paused.run_id)
    assert old is not None and old.executor is None
    assert harness.run(None, resume=paused.run_id, approve=["w"]).status == "completed"
    row = harness.journal.run(paused.run_id)
    assert row is not None and (row.executor, row.cluster) == ("local", None)
