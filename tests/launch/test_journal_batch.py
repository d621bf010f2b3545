"""`Journal.batch()`: one transaction per scheduling round."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from flightdeck.launch import Journal


def _seen(path: Path) -> list[str]:
    with sqlite3.connect(path) as other:  # a second reader, like a resume in another process
        return [row[0] for row in other.execute("SELECT step_id FROM steps ORDER BY step_id")]


def test_rows_written_in_a_batch_commit_together_at_its_end(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite3")
    with journal.batch():
        journal.step_started("r1", "a", "transform", None)
        journal.step_finished("r1", "b", "transform", "completed")
        assert _seen(journal.path) == []  # one transaction: nothing visible yet
    assert _seen(journal.path) == ["a", "b"]
    journal.step_started("r1", "c", "transform", None)  # outside a batch: at once
    assert _seen(journal.path) == ["a", "b", "c"]
    journal.close()


def test_a_batch_that_raises_still_commits_what_it_wrote(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite3")
    with pytest.raises(RuntimeError), journal.batch():
        journal.step_finished("r1", "done", "transform", "completed")
        with journal.batch():  # nested: joins the outer transaction
            journal.step_started("r1", "next", "transform", None)
        raise RuntimeError("a bug in the round")
    assert _seen(journal.path) == ["done", "next"]
    journal.close()


def test_another_threads_write_waits_for_the_batch_to_commit(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite3")
    other = threading.Thread(
        target=journal.step_started, args=("r1", "other", "transform", None), daemon=True
    )
    with journal.batch():
        journal.step_started("r1", "mine", "transform", None)
        other.start()
        other.join(0.2)
        assert other.is_alive()  # held at the journal's lock, not inside this transaction
    other.join(30)
    assert _seen(journal.path) == ["mine", "other"]
    journal.close()


def test_a_read_inside_a_batch_sees_its_writes_and_they_share_one_timestamp(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "runs.sqlite3")
    with journal.batch():
        journal.step_started("r1", "a", "transform", None)
        journal.step_finished("r1", "b", "transform", "completed")
        rows = {row.step_id: row for row in journal.steps("r1")}
        assert set(rows) == {"a", "b"}
        assert _seen(journal.path) == []  # still one transaction
        journal.step_started("r1", "c", "transform", None)
    assert _seen(journal.path) == ["a", "b", "c"]
    after = {row.step_id: row for row in journal.steps("r1")}
    assert after["a"].started_at == after["b"].finished_at == after["c"].started_at
    journal.close()


def test_a_chain_of_transforms_runs_inside_one_round_and_commits_with_it(
    tmp_path: Path,
) -> None:
    """Transforms are pure and write no audit record, so they run without an
    asyncio task inside the round's transaction, and so do the transforms
    they make ready: another connection (a resume in another process) sees
    none of the chain's rows until the round commits, then all of them.
    (Any other step starts only after the commit: tests/launch/test_cascade.py.)"""
    from flightdeck.launch import register_transform
    from flightdeck.launch.steps._transforms import _REGISTRY

    from .conftest import Harness, write_plan

    harness = Harness(tmp_path)
    seen: dict[str, dict[str, str]] = {}

    def look(bindings: dict[str, object], ctx: object) -> int:
        step = str(getattr(ctx, "step_id", "?"))
        with sqlite3.connect(harness.journal.path) as other:
            rows = other.execute("SELECT step_id, status FROM steps").fetchall()
        seen[step] = dict(rows)
        return 1

    register_transform("look_test", look)
    try:
        plan = write_plan(
            tmp_path,
            steps=[
                {"id": "a", "kind": "transform", "transform": "look_test", "outputs": ["v"]},
                {
                    "id": "b",
                    "kind": "transform",
                    "transform": "look_test",
                    "bindings": {"x": "steps.a.v"},
                    "outputs": ["v"],
                },
            ],
        )
        result = harness.run(plan)
        assert result.status == "completed"
        run_id = result.run_id
    finally:
        _REGISTRY.pop("look_test", None)
    assert seen["a"] == {}
    assert seen["b"] == {}
    assert {row.step_id: row.status for row in harness.journal.steps(run_id)} == {
        "a": "completed",
        "b": "completed",
    }
