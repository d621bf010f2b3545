"""Inside `Journal.batch()` a step's start and finish become one write: the
journal must end up exactly as with the two writes, one at a time."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.launch import Journal
from flightdeck.launch.engine import _journal, _rows

STEPS = ["a", "b", "c"]

started = st.tuples(
    st.just("started"),
    st.sampled_from(STEPS),
    st.sampled_from(["transform", "action-call"]),
    st.sampled_from([None, "not-required", "approved:cli"]),
)
finished = st.tuples(
    st.just("finished"),
    st.sampled_from(STEPS),
    st.sampled_from(["transform", "tool"]),
    st.sampled_from(["completed", "failed", "blocked", "pending-approval"]),
    st.integers(0, 3),
    st.sampled_from([None, {"result": 1, "outputs": {"v": 1}}]),
    st.sampled_from([None, {"code": "x.y", "message": "m"}]),
    st.sampled_from([None, "pending", "denied:cli"]),
)
batched = st.lists(st.tuples(st.booleans(), st.one_of(started, finished)), max_size=14)


def _apply(journal: Journal, op: tuple[Any, ...]) -> None:
    if op[0] == "started":
        journal.step_started("r1", op[1], op[2], op[3])
    else:
        _, step, kind, status, attempts, result, error, approval = op
        journal.step_finished(
            "r1",
            step,
            kind,
            status,
            attempts=attempts,
            result=result,
            error=error,
            approval=approval,
        )


def _table(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM steps ORDER BY rowid").fetchall()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batched, batched)
def test_a_batch_leaves_the_rows_the_writes_one_by_one_leave(
    tmp_path_factory: Any, before: list[tuple[bool, Any]], ops: list[tuple[bool, Any]]
) -> None:
    """`before` is written one by one in both (rows from an earlier attempt);
    `ops` is written in one block, then one by one. A read in the middle of
    the block (the flag) flushes it, as a read inside a round would."""
    old = _journal.utc_now
    _journal.utc_now = lambda: "2026-01-01T00:00:00Z"  # one stamp, so the two can be equal
    try:
        tables = []
        for mode in ("batch", "one-by-one"):
            folder = tmp_path_factory.mktemp(mode)
            journal = Journal(folder / "runs.sqlite3")
            journal.steps("r1")  # opened (and its tables made) even with nothing to write
            for _, op in before:
                _apply(journal, op)
            if mode == "batch":
                with journal.batch():
                    for read, op in ops:
                        _apply(journal, op)
                        if read:
                            journal.steps("r1")
            else:
                for _, op in ops:
                    _apply(journal, op)
            journal.close()
            tables.append(_table(folder / "runs.sqlite3"))
    finally:
        _journal.utc_now = old
    assert tables[0] == tables[1]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(json_values)
def test_the_stored_json_is_what_json_dumps_writes(value: Any) -> None:
    import json

    assert _rows.dumps(value) == json.dumps(value, sort_keys=True, ensure_ascii=False)
