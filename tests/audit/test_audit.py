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
    assert sink.migrations() == ["0001_records"]
    conn = sqlite3.connect(tmp_path / "x.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # Reopening does not re-apply a migration.
    again = SQLiteAuditSink(tmp_path / "x.sqlite3")
    assert again.migrations() == ["0001_records"]
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
