"""Two processes opening a new audit store at the same moment: the one that
waits for the other's migration finds it applied instead of applying it
again (`table records already exists` before the audit store's migrations
took the write lock first, as the journal's do)."""

from __future__ import annotations

import linecache
import sqlite3
import sys
import threading
import time
from pathlib import Path

from flightdeck.audit import AuditRecord, SQLiteAuditSink
from flightdeck.audit._sqlite import MIGRATIONS
from flightdeck.config import statements


def _waiting_for_the_lock(thread: threading.Thread) -> bool:
    """The thread's innermost frame is on a statement that takes the write
    lock, in the audit store or the migration it uses, and stays there."""
    seen = set()
    for _ in range(5):
        frame = sys._current_frames().get(thread.ident or -1)
        if frame is None or Path(frame.f_code.co_filename).name != "_sqlite.py":
            return False
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        if "BEGIN" not in line and "executescript" not in line:
            return False
        seen.add((frame.f_code.co_filename, frame.f_lineno))
        time.sleep(0.05)
    return len(seen) == 1


def test_a_store_migrated_while_it_waited_is_not_migrated_again(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    # Another process has begun creating the store and holds the write lock.
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    other.execute("BEGIN IMMEDIATE")
    outcome: list[object] = []

    def record() -> None:
        try:
            SQLiteAuditSink(path).record(AuditRecord("race.test", "run-1", {}))
            outcome.append("ok")
        except Exception as exc:  # reported below
            outcome.append(exc)

    thread = threading.Thread(target=record)
    thread.start()
    deadline = time.monotonic() + 30
    while not _waiting_for_the_lock(thread):
        assert time.monotonic() < deadline, "the store never waited for the lock"
        time.sleep(0.01)
    for name, sql in MIGRATIONS:
        for statement in statements(sql):
            other.execute(statement)
        other.execute("INSERT INTO _migrations VALUES (?, 'now')", (name,))
    other.execute("COMMIT")
    other.close()
    thread.join(timeout=60)
    assert outcome == ["ok"]
    assert len(SQLiteAuditSink(path).records(kind="race.test")) == 1
