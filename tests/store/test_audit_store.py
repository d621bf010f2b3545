"""The audit store, once on SQLite and once on PostgreSQL (the `backend`
fixture): records round-trip, `query` filters and pages in SQL with the same
answers as the Python filter over every record, two writers at once lose
nothing, and another home with the same store lists the same records."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from flightdeck.audit import (
    AuditQuery,
    AuditRecord,
    AuditStoreError,
    _postgres,
    _sqlite,
    default_sink,
)
from tests.cli._run import run

KINDS = ("launch.start", "launch.action_call", "launch.finish", "agent.tool_call", "io.stage")


def _records(seed: int = 7, count: int = 300) -> list[AuditRecord]:
    rng = random.Random(seed)
    out = []
    for n in range(count):
        run = f"run-{n % 12}"
        kind = rng.choice(KINDS)
        fields: dict[str, object] = {"n": n, "ok": rng.random() < 0.7}
        if kind == "launch.start":
            fields["plan"] = f"plan-{n % 12 % 3}"
        if kind in ("launch.action_call", "agent.tool_call"):
            key = rng.choice(("action", "action_ref", "actionRef", "tool"))
            fields[key] = rng.choice(("acme/put", "acme/get", "Read"))
        if rng.random() < 0.2:
            fields["retryCount"] = rng.choice((0, 1, 2))
        stamp = f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000000Z"
        out.append(AuditRecord(kind, None if n % 29 == 0 else run, fields, stamp))
    return out


QUERIES = [
    AuditQuery(),
    AuditQuery(limit=5),
    AuditQuery(limit=0),
    AuditQuery(run_id="run-3"),
    AuditQuery(kinds=["launch."]),
    AuditQuery(kinds=["agent.*", "io.stage"], limit=7),
    AuditQuery(kinds=["launch"]),  # exact: no kind is just "launch"
    AuditQuery(plan="plan-1"),
    AuditQuery(plan="plan-2", kinds=["launch.action_call"], limit=3),
    AuditQuery(action="acme/put"),
    AuditQuery(action="Read", run_id="run-5"),
    AuditQuery(where={"ok": "false"}),
    AuditQuery(where={"ok": "FALSE", "retry_count": "2"}),
    AuditQuery(where={"n": "17"}),
    AuditQuery(where={"n": "17.0"}),  # the text of 17 is "17": nothing
    AuditQuery(since="2026-01-01T00:02:00.000000Z", until="2026-01-01T00:03:00.000000Z"),
    AuditQuery(since="2026-01-01T00:04:00.000000Z", kinds=["launch."], limit=10),
]


def test_records_round_trip_and_list_by_run_and_kind(backend: str) -> None:
    sink = default_sink()
    for record in _records(count=40):
        sink.record(record)
    every = sink.records()
    assert every == _records(count=40)
    assert sink.records(run_id="run-3") == [r for r in every if r.run_id == "run-3"]
    assert sink.records(kind="io.stage") == [r for r in every if r.kind == "io.stage"]


@pytest.mark.parametrize("query", QUERIES, ids=[str(n) for n in range(len(QUERIES))])
def test_query_in_sql_answers_as_the_python_filter(backend: str, query: AuditQuery) -> None:
    sink = default_sink()
    for record in _records():
        sink.record(record)
    assert sink.query(query) == query.apply(sink.records())


def test_query_pages_without_reading_every_row(backend: str) -> None:
    sink = default_sink()
    for record in _records(count=2000):
        sink.record(record)
    newest = sink.query(AuditQuery(kinds=["launch."], limit=3))
    assert [r.fields["n"] for r in newest] == sorted(r.fields["n"] for r in newest)
    assert newest == AuditQuery(kinds=["launch."], limit=3).apply(sink.records())


def test_both_backends_keep_the_same_migration_history(backend: str) -> None:
    assert [n for n, _ in _sqlite.MIGRATIONS] == [n for n, _ in _postgres.MIGRATIONS]
    sink = default_sink()
    sink.record(AuditRecord("x"))
    assert sink.migrations() == ["0001_records", "0002_query_indexes"]


def test_two_writers_at_once_lose_no_record(backend: str) -> None:
    def writer(name: str) -> None:
        sink = default_sink()
        for n in range(100):
            sink.record(AuditRecord("io.stage", f"run-{name}", {"n": n}))

    # Created first: two SQLite sinks creating a new file at the same instant
    # race on its first migration (a known first-use race of the file, not
    # of writing, which this test is about).
    default_sink().records()
    threads = [threading.Thread(target=writer, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    sink = default_sink()
    for name in "ab":
        assert [r.fields["n"] for r in sink.records(run_id=f"run-{name}")] == list(range(100))


def test_audit_list_from_another_home_sees_the_same_records(backend: str, tmp_path: Path) -> None:
    sink = default_sink()
    for record in _records(count=60):
        sink.record(record)
    args = ["audit", "list", "--kind", "launch.", "--where", "ok=true", "--format", "json"]
    here = json.loads(run(*args).stdout)
    there = json.loads(run(*args, env={"FLIGHTDECK_HOME": str(tmp_path / "operator")}).stdout)
    if backend == "sqlite":
        assert there == []  # SQLite is one home's file
    else:
        assert there == here and len(here) > 5


def test_a_store_that_is_down_is_a_located_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", "postgresql://fd:pw9@127.0.0.1:1/x")
    with pytest.raises(AuditStoreError) as caught:
        default_sink().record(AuditRecord("x"))
    assert caught.value.code == "database.unreachable"
    assert "pw9" not in caught.value.message and "127.0.0.1:1" in caught.value.message
    result = run("audit", "list", "--format", "json")
    assert result.returncode == 1, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "database.unreachable" and "pw9" not in result.stdout + result.stderr
