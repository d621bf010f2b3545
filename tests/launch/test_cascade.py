"""Transforms made ready by transforms run in the same round's transaction
(the scheduler's cascade); every other step still starts only once its
`started` row and its inputs' rows are committed."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.launch import ActionCall, ActionFailed, LaunchEvent
from flightdeck.launch.engine import _scheduler
from flightdeck.launch.steps._transforms import _REGISTRY

from .conftest import Harness, contract, write_plan


def _on_disk(path: Path) -> dict[str, str]:
    # Another connection: what a resume in another process would find.
    with sqlite3.connect(path) as other:
        return dict(other.execute("SELECT step_id, status FROM steps").fetchall())


def _transform(step: str, parent: str | None, name: str | None = None) -> dict[str, Any]:
    bindings = {"x": f"steps.{parent}.v"} if parent else {}
    named = {"transform": name} if name else {}
    return {"id": step, "kind": "transform", **named, "bindings": bindings, "outputs": ["v"]}


def _action(step: str, parent: str) -> dict[str, Any]:
    return {
        "id": step,
        "kind": "action-call",
        "actionRef": "aileron:svc.look",
        "args": {"x": f"steps.{parent}.v"},
        "outputs": ["v"],
    }


def test_an_action_after_a_chain_of_transforms_starts_only_once_they_are_committed(
    tmp_path: Path,
) -> None:
    harness = Harness(tmp_path)
    seen: dict[str, dict[str, str]] = {}

    async def look(call: ActionCall) -> dict[str, Any]:
        seen[call.step_id] = _on_disk(harness.journal.path)
        return {"v": 1}

    harness.handlers["svc.look"] = look
    steps = [
        {**_transform("t1", None), "bindings": {"x": "inputs.seed"}},
        _transform("t2", "t1"),
        _transform("t3", "t2"),
        _action("a", "t3"),
        _transform("t4", "a"),
        _transform("t5", "t4"),
        _action("b", "t5"),
    ]
    seed = {"name": "seed", "type": "number", "resolution": {"rule": "literal", "default": 1}}
    plan = write_plan(
        tmp_path, steps=steps, inputs=[seed], actions={"aileron:svc.look": contract()}
    )
    assert harness.run(plan).status == "completed"
    assert seen["a"] == {"t1": "completed", "t2": "completed", "t3": "completed", "a": "started"}
    assert seen["b"] == {
        **{step: "completed" for step in ("t1", "t2", "t3", "a", "t4", "t5")},
        "b": "started",
    }


def test_a_transform_after_an_action_call_sees_its_completion_on_disk(tmp_path: Path) -> None:
    """A round that records a finished action commits it before any transform
    runs: a kill -9 during a cascade never leaves a finished call in doubt."""
    harness = Harness(tmp_path)
    seen: dict[str, dict[str, str]] = {}

    async def look(call: ActionCall) -> dict[str, Any]:
        return {"v": 1}

    def record(bindings: Any, ctx: Any) -> int:
        seen[ctx.step_id] = _on_disk(harness.journal.path)
        return 1

    harness.handlers["svc.look"] = look
    _REGISTRY["look_after_test"] = record
    steps = [
        _transform("t0", None, "look_after_test"),
        _action("c", "t0"),
        _transform("t1", "c", "look_after_test"),
        _transform("t2", "t1", "look_after_test"),
    ]
    try:
        plan = write_plan(tmp_path, steps=steps, actions={"aileron:svc.look": contract()})
        assert harness.run(plan).status == "completed"
    finally:
        _REGISTRY.pop("look_after_test", None)
    assert seen["t1"]["c"] == "completed"
    assert seen["t2"]["c"] == "completed"


# -- the cascade changes commits only: same order, events, rows and audit ----


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[list[int]], list[bool], set[int]]:
    size = draw(st.integers(1, 12))
    parents = [
        sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else [] for i in range(size)
    ]
    actions = [draw(st.booleans()) for _ in range(size)]
    failing = draw(st.sets(st.integers(0, size - 1), max_size=2))
    return parents, actions, failing


def _stable(fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if k not in {"launch_time", "out_dir"}}


def _walk(tmp: Path, dag: Any, max_parallel: int, limit: int) -> tuple[Any, ...]:
    parents, actions, failing = dag
    harness = Harness(tmp)
    order: list[str] = []

    async def work(call: ActionCall) -> dict[str, Any]:
        order.append(call.step_id)
        await asyncio.sleep(0)
        if int(call.step_id[1:]) in failing:
            raise ActionFailed("planned failure")
        return {"out": call.step_id}

    def compute(bindings: Any, ctx: Any) -> Any:
        order.append(ctx.step_id)
        if int(ctx.step_id[1:]) in failing:
            raise ValueError("planned failure")
        return {"out": ctx.step_id}

    harness.handlers["svc.work"] = work
    _REGISTRY["cascade_test"] = compute
    steps: list[dict[str, Any]] = []
    for i in reversed(range(len(parents))):  # declared out of order: ties are not trivial
        refs = {f"p{p}": f"steps.s{p}.out" for p in parents[i]}
        if actions[i]:
            step = {"kind": "action-call", "actionRef": "aileron:svc.work", "args": refs}
        else:
            step = {"kind": "transform", "transform": "cascade_test", "bindings": refs}
        steps.append({"id": f"s{i}", **step, "outputs": ["out"]})
    plan = write_plan(tmp, steps=steps, actions={"aileron:svc.work": contract()})
    events: list[LaunchEvent] = []
    old = _scheduler.CASCADE_LIMIT
    _scheduler.CASCADE_LIMIT = limit
    try:
        result = harness.run(plan, max_parallel=max_parallel, on_event=events.append)
    finally:
        _scheduler.CASCADE_LIMIT = old
        _REGISTRY.pop("cascade_test", None)
    rows = [
        (r.step_id, r.kind, r.status, r.attempts, r.result, r.error, r.approval)
        for r in harness.journal.steps(result.run_id)
    ]
    # The audit trail with what differs between any two runs taken out.
    records = [
        (r.kind, json.dumps(_stable(r.fields), sort_keys=True).replace(result.run_id, "RUN"))
        for r in harness.audit.records()
    ]
    harness.journal.close()
    happened = [(e.kind, e.step_id, e.status, e.detail) for e in events if e.kind != "run_started"]
    return order, happened, rows, result.status, result.steps, records


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dags(), st.sampled_from([1, 1, 3]), st.sampled_from([1, 2, 256]))
def test_a_cascade_walks_like_one_round_per_step(
    tmp_path_factory: Any, dag: Any, max_parallel: int, limit: int
) -> None:
    """With CASCADE_LIMIT 0 the scheduler is the one-round-per-step walk.
    Only where no two steps can race (one at a time, or transforms only) is
    the order a fact of the plan; there the walks must agree exactly."""
    parents, actions, failing = dag
    if max_parallel > 1 and any(actions):
        actions = [False] * len(actions)
    dag = (parents, actions, failing)
    slow = _walk(tmp_path_factory.mktemp("slow"), dag, max_parallel, 0)
    fast = _walk(tmp_path_factory.mktemp("fast"), dag, max_parallel, limit)
    assert fast == slow


def test_a_chain_longer_than_the_limit_commits_between_cascades(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """docs/launch.md: up to 256 transforms per round; the next starts after
    the commit, like one round per step."""
    assert _scheduler.CASCADE_LIMIT == 256
    monkeypatch.setattr(_scheduler, "CASCADE_LIMIT", 2)
    harness = Harness(tmp_path)
    seen: dict[str, dict[str, str]] = {}

    def look(bindings: Any, ctx: Any) -> int:
        seen[ctx.step_id] = _on_disk(harness.journal.path)
        return 1

    _REGISTRY["look_chain"] = look
    try:
        steps = [
            {
                "id": f"t{i}",
                "kind": "transform",
                "transform": "look_chain",
                "bindings": {"x": f"steps.t{i - 1}.v"} if i else {},
                "outputs": ["v"],
            }
            for i in range(5)
        ]
        assert harness.run(write_plan(tmp_path, steps=steps)).status == "completed"
    finally:
        _REGISTRY.pop("look_chain", None)
    assert seen["t0"] == seen["t1"] == {}
    # t0 and t1 cascaded; t2 runs after their commit, then t3 and t4 cascade.
    committed = {"t0": "completed", "t1": "completed", "t2": "started"}
    assert seen["t2"] == seen["t3"] == seen["t4"] == committed


def test_killed_inside_a_cascade_a_resume_reruns_only_the_unrecorded_transforms(
    tmp_path: Path,
) -> None:
    """A child process dies (os._exit, no cleanup: like kill -9) while the
    third transform of a chain runs. The action before the chain finished in
    a round that committed before any transform ran, so it is not called
    again; t0 ran after that commit, t1 and t2 in the next round's cascade,
    whose rows were never committed: the resume runs the three again."""
    import os

    harness = Harness(tmp_path)
    ran = tmp_path / "ran.log"
    crash = tmp_path / "crash-once"
    crash.touch()

    def note(step: str) -> None:
        with ran.open("a") as log:
            log.write(step + "\n")

    async def act(call: ActionCall) -> dict[str, Any]:
        note(call.step_id)
        return {"v": 1}

    def work(bindings: Any, ctx: Any) -> int:
        note(ctx.step_id)
        if ctx.step_id == "t2" and crash.exists():
            crash.unlink()
            os._exit(9)
        return 1

    harness.handlers["svc.act"] = act
    steps: list[dict[str, Any]] = [
        {"id": "a", "kind": "action-call", "actionRef": "aileron:svc.act", "outputs": ["v"]}
    ]
    for i in range(4):
        parent = f"t{i - 1}" if i else "a"
        steps.append(
            {
                "id": f"t{i}",
                "kind": "transform",
                "transform": "crash_test",
                "bindings": {"x": f"steps.{parent}.v"},
                "outputs": ["v"],
            }
        )
    plan = write_plan(tmp_path, steps=steps, actions={"aileron:svc.act": contract()})
    _REGISTRY["crash_test"] = work
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - the child never returns
            try:
                harness.run(plan)
            finally:
                os._exit(1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 9
        assert _on_disk(harness.journal.path) == {"a": "completed", "t0": "started"}
        run_id = harness.journal.runs()[0].run_id
        result = harness.run(None, resume=run_id)
    finally:
        _REGISTRY.pop("crash_test", None)
    assert result.status == "completed"
    assert ran.read_text().split() == ["a", "t0", "t1", "t2", "t0", "t1", "t2", "t3"]
