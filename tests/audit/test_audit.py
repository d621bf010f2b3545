"""The audit service: sinks store, list by run id, and keep migrations append-only."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from flightdeck.audit import (
    AuditReader,
    AuditRecord,
    AuditSink,
    JsonlAuditSink,
    MemoryAuditSink,
    SQLiteAuditSink,
    default_sink,
    list_records,
)
from flightdeck.config import data_dir


def _sinks(tmp_path: Path) -> list[AuditReader]:
    return [
        SQLiteAuditSink(tmp_path / "a.sqlite3"),
        JsonlAuditSink(tmp_path / "a.jsonl"),
        MemoryAuditSink(),
    ]


def test_every_sink_records_and_lists_by_run_id(tmp_path: Path) -> None:
    for sink in _sinks(tmp_path):
        assert isinstance(sink, AuditSink)
        sink.record(AuditRecord("io.stage", "run-1", {"key": "a", "bytes": 3}))
        sink.record(AuditRecord("io.sync", "run-2", {"key": "b"}))
        sink.record(AuditRecord("io.sync", "run-1", {"key": "c", "nested": {"x": [1]}}))
        got = sink.records(run_id="run-1")
        assert [r.fields["key"] for r in got] == ["a", "c"], type(sink)
        assert got[1].fields["nested"] == {"x": [1]}
        assert [r.kind for r in sink.records(kind="io.sync")] == ["io.sync", "io.sync"]
        assert all(r.timestamp.endswith("Z") for r in got)


def test_default_sink_lives_in_the_data_dir(fd_home: Path) -> None:
    sink = default_sink()
    assert sink.path == data_dir() / "audit.sqlite3"
    assert str(sink.path).startswith(str(fd_home))
    sink.record(AuditRecord("agent.turn", None, {"n": 1}))
    assert [r.kind for r in list_records()] == ["agent.turn"]


def test_sqlite_sink_uses_wal_and_named_migrations(tmp_path: Path) -> None:
    sink = SQLiteAuditSink(tmp_path / "x.sqlite3")
    sink.record(AuditRecord("k", "r", {}))
    assert sink.migrations() == ["0001_records", "0002_query_indexes"]
    conn = sqlite3.connect(tmp_path / "x.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # Reopening does not re-apply a migration.
    again = SQLiteAuditSink(tmp_path / "x.sqlite3")
    assert again.migrations() == ["0001_records", "0002_query_indexes"]
    assert len(again.records()) == 1


def test_sqlite_sink_is_safe_across_threads(tmp_path: Path) -> None:
    sink = SQLiteAuditSink(tmp_path / "t.sqlite3")

    def work(i: int) -> None:
        for j in range(5):
            sink.record(AuditRecord("k", f"run-{i}", {"j": j}))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(sink.records()) == 40
    assert [r.fields["j"] for r in sink.records(run_id="run-3")] == [0, 1, 2, 3, 4]


def test_jsonl_lines_have_the_record_shape_and_torn_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    sink = JsonlAuditSink(path)
    sink.record(AuditRecord("io.stage", "r", {"sha256": "00"}))
    with path.open("a") as fh:
        fh.write('{"kind": "half"\n')
    sink.record(AuditRecord("io.sync", "r", {}))
    first = json.loads(path.read_text().splitlines()[0])
    assert set(first) == {"kind", "run_id", "timestamp", "fields"}
    assert [r.kind for r in sink.records()] == ["io.stage", "io.sync"]


def test_jsonl_missing_file_lists_nothing(tmp_path: Path) -> None:
    assert JsonlAuditSink(tmp_path / "none.jsonl").records() == []


@pytest.mark.parametrize(
    ("bad", "missing"), [({"kind": "x"}, "timestamp"), ({"timestamp": "t"}, "kind")]
)
def test_record_from_dict_needs_kind_and_timestamp(bad: dict[str, str], missing: str) -> None:
    with pytest.raises(ValueError, match=missing):
        AuditRecord.from_dict(bad)


def test_public_surface_is_sorted_and_complete() -> None:
    import flightdeck.audit as fa

    assert fa.__all__ == sorted(fa.__all__, key=lambda s: (not s.isupper(), s))
    assert all(hasattr(fa, n) for n in fa.__all__)


def test_a_store_written_before_the_query_indexes_gains_them_and_keeps_its_records(
    tmp_path: Path,
) -> None:
    from flightdeck.audit import AuditQuery
    from flightdeck.audit._sqlite import MIGRATIONS

    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    name, sql = MIGRATIONS[0]
    conn.executescript(f"BEGIN; {sql}; INSERT INTO _migrations VALUES ('{name}', 'then'); COMMIT;")
    conn.execute(
        "INSERT INTO records (kind, run_id, timestamp, fields) VALUES"
        " ('launch.run', 'r1', '2026-01-01T00:00:00Z', '{\"plan\": \"p\", \"tool\": \"Read\"}')"
    )
    conn.close()
    sink = SQLiteAuditSink(path)
    assert [r.kind for r in sink.query(AuditQuery(plan="p", action="Read"))] == ["launch.run"]
    assert sink.migrations() == ["0001_records", "0002_query_indexes"]
    from flightdeck.audit._sql import where

    with sqlite3.connect(path) as check:
        for query, index in (
            (AuditQuery(plan="p"), "records_plan"),
            (AuditQuery(action="Read"), "records_tool"),
        ):
            clause, args = where(query, "sqlite")
            plan = check.execute(f"EXPLAIN QUERY PLAN SELECT id FROM records{clause}", args)
            assert index in str(plan.fetchall())
