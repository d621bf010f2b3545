"""The UI's readers over stores written by the launch and audit modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.audit import AuditQuery, AuditRecord, SQLiteAuditSink
from flightdeck.launch import Journal
from flightdeck.ui import UiError
from flightdeck.ui._data import PAGE_SIZE, Reader, RunFilter, read_only


def _audit(path: Path, count: int) -> None:
    sink = SQLiteAuditSink(path)
    for n in range(count):
        kind = "launch.action_call" if n % 2 else "launch.run"
        sink.record(AuditRecord(kind, f"run-{n % 7}", {"n": n}, timestamp=f"2026-01-01T{n:09d}"))
    sink.close()


def test_the_newest_records_are_read_without_the_rest(tmp_path: Path) -> None:
    _audit(tmp_path / "audit.sqlite3", 2500)
    reader = Reader(tmp_path / "runs.sqlite3", tmp_path / "audit.sqlite3")
    records, more = reader.records(AuditQuery(kinds=("launch.run",)), newest=500)
    assert more and len(records) == 500
    assert [r.fields["n"] for r in records] == list(range(1500, 2500, 2))  # oldest first
    every, more = reader.records(AuditQuery(kinds=("launch.run",)))
    assert not more and len(every) == 1250
    few, more = reader.records(AuditQuery(run_id="run-3"), newest=500)
    assert not more and len(few) == len([n for n in range(2500) if n % 7 == 3])


def test_runs_page_through_the_journal_newest_first(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite3")
    with journal.batch():
        for n in range(PAGE_SIZE + 5):
            journal.create_run(
                f"run-{n:03d}",
                plan_name="p",
                plan_path="/nowhere",
                content_hash=None,
                launch_time="t",
                inputs={},
                options={},
            )
    journal.close()
    reader = Reader(tmp_path / "runs.sqlite3", tmp_path / "audit.sqlite3")
    first = reader.runs(RunFilter())
    assert first.total == PAGE_SIZE + 5 and first.pages == 2 and len(first.runs) == PAGE_SIZE
    last = reader.runs(RunFilter(page=9))  # past the end: the last page
    assert last.page == 1 and len(last.runs) == 5
    assert {r["run_id"] for r in first.runs}.isdisjoint({r["run_id"] for r in last.runs})


def test_the_connection_cannot_write(tmp_path: Path) -> None:
    _audit(tmp_path / "audit.sqlite3", 1)
    with (
        pytest.raises(UiError, match="readonly"),
        read_only(tmp_path / "audit.sqlite3") as conn,
    ):
        assert conn is not None
        conn.execute("DELETE FROM records")


def test_sql_narrowing_agrees_with_the_audit_query(tmp_path: Path) -> None:
    sink = SQLiteAuditSink(tmp_path / "audit.sqlite3")
    sink.record(AuditRecord("launch.action_call", "r1", {"ok": True, "action": "a:b.c"}))
    sink.record(AuditRecord("launch.run", "r1", {"ok": False, "plan": "p"}))
    sink.record(AuditRecord("io.stage", "r1", {"key": "a b\\"}))
    sink.close()
    reader = Reader(tmp_path / "runs.sqlite3", tmp_path / "audit.sqlite3")

    def kinds(query: AuditQuery) -> list[str]:
        return [r.kind for r in reader.records(query, newest=10)[0]]

    assert kinds(AuditQuery(kinds=("launch.*",))) == ["launch.action_call", "launch.run"]
    assert kinds(AuditQuery(kinds=("launch.run", "io.stage"))) == ["launch.run", "io.stage"]
    assert kinds(AuditQuery(where={"ok": "True"})) == ["launch.action_call"]
    assert kinds(AuditQuery(action="a:b.c")) == ["launch.action_call"]
    assert kinds(AuditQuery(where={"key": "a b\\"})) == ["io.stage"]
