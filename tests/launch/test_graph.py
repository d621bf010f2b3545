"""The step graph walk: order, concurrency bound, failure isolation."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from flightdeck.launch import ActionCall, ActionFailed

from .conftest import Harness, contract, write_plan

ACTIONS = {"aileron:svc.work": contract(), "aileron:svc.boom": contract()}


def _call(step_id: str, deps: list[str] = (), ref: str = "aileron:svc.work") -> dict[str, Any]:
    args = {f"a{i}": f"steps.{d}.out" for i, d in enumerate(deps)}
    return {
        "id": step_id,
        "kind": "action-call",
        "actionRef": ref,
        "args": args,
        "outputs": ["out"],
    }


def test_topological_order_ties_by_declaration(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: topological order, ties broken by declaration order."""
    order: list[str] = []
    harness.handlers["svc.work"] = lambda call: order.append(call.step_id) or call.step_id
    steps = [_call("z"), _call("y", ["z"]), _call("a"), _call("m", ["a", "y"]), _call("b")]
    result = harness.run(write_plan(tmp_path, steps=steps, actions=ACTIONS), max_parallel=1)
    assert result.status == "completed"
    assert order == ["z", "y", "a", "m", "b"]


def test_ready_steps_run_concurrently_bounded(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: ready steps run concurrently, bounded by --max-parallel."""
    lock = threading.Lock()
    state = {"now": 0, "peak": 0, "target": 3}

    async def work(call: ActionCall) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        # Hold the slot until `target` calls overlap (no fixed sleep that a loaded machine
        # could outlast); the bound only runs out if the runner never reaches the target.
        deadline = asyncio.get_running_loop().time() + 10
        while state["peak"] < state["target"] and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)
        with lock:
            state["now"] -= 1
        return "ok"

    harness.handlers["svc.work"] = work
    steps = [_call(f"s{i}") for i in range(8)]
    plan = write_plan(tmp_path, steps=steps, actions=ACTIONS)
    assert harness.run(plan, max_parallel=3).status == "completed"
    assert state["peak"] == 3
    state.update(peak=0, target=1)
    assert harness.run(plan, max_parallel=1).status == "completed"
    assert state["peak"] == 1


def test_failure_stops_dependants_and_independent_branches_finish(
    harness: Harness, tmp_path: Path
) -> None:
    """Issue 6: a step's failure stops its dependants, lets independent branches
    finish, and fails the run with the step named."""
    ran: list[str] = []
    harness.handlers["svc.work"] = lambda call: ran.append(call.step_id) or 1

    def boom(call: ActionCall) -> Any:
        time.sleep(0.01)
        raise ActionFailed("upstream says no")

    harness.handlers["svc.boom"] = boom
    steps = [
        _call("bad", ref="aileron:svc.boom"),
        _call("child", ["bad"]),
        _call("grandchild", ["child"]),
        _call("other"),
        _call("other2", ["other"]),
    ]
    result = harness.run(write_plan(tmp_path, steps=steps, actions=ACTIONS))
    assert result.status == "failed"
    assert result.error is not None and result.error.step == "bad"
    assert result.error.code == "action.failed"
    assert sorted(ran) == ["other", "other2"]
    assert result.steps == {
        "bad": "failed",
        "child": "blocked",
        "grandchild": "blocked",
        "other": "completed",
        "other2": "completed",
    }


def test_two_steps_read_one_resolved_input(harness: Harness, tmp_path: Path) -> None:
    seen: list[Any] = []
    harness.handlers["svc.work"] = lambda call: seen.append(call.args["t"]) or 1
    inputs = [{"name": "t", "type": "timestamp", "resolution": {"rule": "dynamic", "value": "now"}}]
    steps = [
        {"id": s, "kind": "action-call", "actionRef": "aileron:svc.work", "args": {"t": "inputs.t"}}
        for s in ("a", "b")
    ]
    plan = write_plan(tmp_path, steps=steps, inputs=inputs, actions=ACTIONS)
    assert harness.run(plan).status == "completed"
    assert len(seen) == 2 and seen[0] == seen[1]


def test_executor_boundary_is_plain_data(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: step inputs and results serializable (a distributed executor later)."""
    import json

    from flightdeck.launch import LocalExecutor, StepOutcome, StepTask

    tasks: list[dict[str, Any]] = []

    class Recording(LocalExecutor):
        async def submit(self, task: StepTask) -> StepOutcome:
            data = json.loads(json.dumps(task.to_dict()))
            tasks.append(data)
            outcome = await super().submit(StepTask.from_dict(data))
            return StepOutcome.from_dict(json.loads(json.dumps(outcome.to_dict())))

    harness.handlers["svc.work"] = lambda call: {"out": [1, 2]}
    runtime = harness.runtime()
    runtime.executor = Recording(runtime.services)
    plan = write_plan(tmp_path, steps=[_call("a"), _call("b", ["a"])], actions=ACTIONS)
    from flightdeck.launch import Approvals, LaunchOptions, launch

    opts = LaunchOptions(unsigned=True, out_dir=tmp_path / "o", approvals=Approvals())
    result = asyncio.run(launch(plan, opts, runtime))
    assert result.status == "completed"
    assert [t["step_id"] for t in tasks] == ["a", "b"]
    assert tasks[1]["values"] == {"a0": [1, 2]}


def test_an_executor_that_overrides_submit_sees_transforms_too(
    harness: Harness, tmp_path: Path
) -> None:
    """The local executor runs transforms without a task, but a subclass
    that intercepts `submit` still receives every step."""
    from flightdeck.launch import Approvals, LaunchOptions, LocalExecutor, StepOutcome, StepTask
    from flightdeck.launch import launch as run_launch

    kinds: list[str] = []

    class Recording(LocalExecutor):
        async def submit(self, task: StepTask) -> StepOutcome:
            kinds.append(task.kind)
            return await super().submit(task)

    runtime = harness.runtime()
    runtime.executor = Recording(runtime.services)
    plan = write_plan(
        tmp_path,
        inputs=[{"name": "s", "type": "string", "resolution": {"rule": "literal", "default": "x"}}],
        steps=[{"id": "t", "kind": "transform", "bindings": {"s": "inputs.s"}, "outputs": ["v"]}],
    )
    opts = LaunchOptions(unsigned=True, out_dir=tmp_path / "o", approvals=Approvals())
    assert asyncio.run(run_launch(plan, opts, runtime)).status == "completed"
    assert kinds == ["transform"]
