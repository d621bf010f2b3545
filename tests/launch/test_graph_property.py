"""Property: for random DAGs, the walk order is Kahn's with declaration-order
ties, and a failure blocks exactly its descendants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.flightplan import StepGraph, load_plan
from flightdeck.launch import ActionCall, ActionFailed

from .conftest import Harness, contract, write_plan


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[list[int]], set[int]]:
    size = draw(st.integers(1, 9))
    parents = [
        sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else [] for i in range(size)
    ]
    failing = draw(st.sets(st.integers(0, size - 1), max_size=2))
    return parents, failing


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dags())
def test_walk_order_and_failure_blocking(tmp_path_factory: Any, dag: Any) -> None:
    parents, failing = dag
    tmp = tmp_path_factory.mktemp("dag")
    harness = Harness(tmp)
    order: list[str] = []

    def work(call: ActionCall) -> Any:
        order.append(call.step_id)
        if int(call.step_id[1:]) in failing:
            raise ActionFailed("planned failure")
        return 1

    harness.handlers["svc.work"] = work
    # Declare steps in reverse creation order so ties are not trivially sorted.
    steps = [
        {
            "id": f"s{i}",
            "kind": "action-call",
            "actionRef": "aileron:svc.work",
            "args": {f"p{p}": f"steps.s{p}.out" for p in parents[i]},
            "outputs": ["out"],
        }
        for i in reversed(range(len(parents)))
    ]
    plan_path: Path = write_plan(tmp, steps=steps, actions={"aileron:svc.work": contract()})
    result = harness.run(plan_path, max_parallel=1)
    loaded = load_plan(plan_path).plan
    assert loaded is not None
    expected = list(StepGraph.of(loaded).topological_order())
    blocked = set()
    for step in expected:  # topological: parents settle first
        index = int(step[1:])
        if any(p in failing or f"s{p}" in blocked for p in parents[index]):
            blocked.add(step)
    assert order == [s for s in expected if s not in blocked]
    for step, status in result.steps.items():
        index = int(step[1:])
        if step in blocked:
            assert status == "blocked"
        elif index in failing:
            assert status == "failed"
        else:
            assert status == "completed"
    assert (result.status == "failed") == bool(failing)
