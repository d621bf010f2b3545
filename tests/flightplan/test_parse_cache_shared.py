"""What the parse cache shares between loads of the same bytes besides the
diagnostics: the step graph and each step's parsed bindings and dependencies.
A hit's are equal to what a fresh read of the same data computes, and nothing
a launch (or any caller) does to its plan changes what the next load gets."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.flightplan import StepGraph, load_plan
from flightdeck.flightplan._parsed import clear as clear_parse_cache
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.model._read import read_plan


def _write(folder: Path, steps: list[dict[str, Any]]) -> Path:
    seed = {"name": "seed", "type": "number", "resolution": {"rule": "literal", "default": 1}}
    block = {"inputs": [seed], "outputs": [], "steps": steps}
    data = {"name": "shared-plan", "description": "A plan.", "aileron": block}
    path = folder / "SKILL.md"
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n", "utf-8")
    return path


def _derived(plan: FlightPlan) -> tuple[Any, ...]:
    graph = plan.graph
    per_step = tuple((step.bindings(), step.dependencies()) for step in plan.steps)
    try:
        order: tuple[str, ...] | None = graph.topological_order()
    except ValueError:
        order = None
    return graph.order, dict(graph.successors), graph.cycles(), order, per_step


@st.composite
def _steps(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 12))
    ids = [draw(st.sampled_from([f"s{i}", "dup"])) for i in range(count)]
    names = [*ids, "ghost"]  # a reference may dangle
    steps: list[dict[str, Any]] = []
    for step_id in ids:
        kind = draw(st.sampled_from(["transform", "llm-seam", "action-call"]))
        refs = {
            f"a{n}": draw(
                st.sampled_from(
                    [f"steps.{draw(st.sampled_from(names))}.v", "inputs.seed", "not a ref"]
                )
            )
            for n in range(draw(st.integers(0, 3)))
        }
        step: dict[str, Any] = {"id": step_id, "kind": kind, "outputs": ["v"]}
        step["args" if kind == "action-call" else "bindings"] = refs
        if kind == "llm-seam":
            step["prompt"] = f"use {{{{ steps.{draw(st.sampled_from(names))}.v }}}}"
        if draw(st.booleans()):
            step["trustContract"] = {"hosts": ["example.com"], "effect": "read"}
            step["command"] = ["echo", "{{ inputs.seed }}"]
            step["mount"] = {"path": "/in"}
        if draw(st.booleans()):
            steps.append({"kind": "transform"})  # no id: skipped, indexes keep their place
        steps.append(step)
    return steps


@settings(max_examples=60, deadline=None)
@given(_steps())
def test_a_hit_shares_what_a_fresh_read_computes(steps: list[dict[str, Any]]) -> None:
    clear_parse_cache()
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), steps)
        first = load_plan(path)
        hit = load_plan(path)
    assert first.plan is not None and hit.plan is not None and hit.document is not None
    assert hit.plan.graph is first.plan.graph  # shared, not rebuilt
    fresh = read_plan(hit.document.data, hit.document.body)
    assert hit.plan == fresh == first.plan
    assert _derived(hit.plan) == _derived(fresh) == _derived(first.plan)
    assert hit.plan.graph == StepGraph.of(fresh)
    items = hit.document.data["aileron"]["steps"]
    for step, other in zip(hit.plan.steps, fresh.steps, strict=True):
        assert step.__dict__.keys() >= {f for f in other.__dict__ if not f.startswith("_")}
        assert step.raw is items[step.index]  # a view of this caller's data
        assert step.references is not other.references
        if step.trust_contract is not None:
            assert step.trust_contract.raw is items[step.index]["trustContract"]


def test_what_a_caller_changes_in_its_steps_does_not_reach_the_next(tmp_path: Path) -> None:
    steps = [
        {"id": "a", "kind": "transform", "bindings": {"x": "inputs.seed"}, "outputs": ["v"]},
        {"id": "b", "kind": "transform", "bindings": {"x": "steps.a.v"}, "outputs": ["v"]},
    ]
    path = _write(tmp_path, steps)
    load_plan(path)
    first = load_plan(path).plan
    assert first is not None
    first.steps[1].references["x"] = "steps.b.v"  # type: ignore[index]
    first.steps[1].raw["bindings"]["x"] = "steps.b.v"
    object.__setattr__(first.steps[1], "id", "c")
    again = load_plan(path).plan
    assert again is not None
    assert again.steps[1].id == "b"
    assert dict(again.steps[1].references) == {"x": "steps.a.v"}
    assert again.steps[1].raw["bindings"] == {"x": "steps.a.v"}
    assert again.steps[1].dependencies() == ("a",)


def test_the_shared_graph_cannot_be_edited(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "a", "kind": "transform", "outputs": ["v"]}])
    plan = load_plan(path).plan
    assert plan is not None
    with pytest.raises(TypeError):
        plan.graph.successors["a"] = ("b",)  # type: ignore[index]
    bindings = plan.steps[0].bindings()
    bindings["x"] = bindings.get("x")  # type: ignore[assignment]
    again = load_plan(path).plan
    assert again is not None and again.steps[0].bindings() == {}
    assert dict(again.graph.successors) == {"a": ()}


def test_a_launch_does_not_change_what_the_next_launch_sees(tmp_path: Path) -> None:
    from flightdeck.audit import MemoryAuditSink
    from flightdeck.launch import (
        Approvals,
        HandlerInvoker,
        Journal,
        LaunchOptions,
        Runtime,
        SecretStore,
        StepServices,
        StepSettings,
        launch,
    )

    clear_parse_cache()
    steps = [{"id": "s0", "kind": "transform", "bindings": {"x": "inputs.seed"}, "outputs": ["v"]}]
    steps += [
        {
            "id": f"s{i}",
            "kind": "transform",
            "bindings": {"x": f"steps.s{i - 1}.v"},
            "outputs": ["v"],
        }
        for i in range(1, 6)
    ]
    path = _write(tmp_path, steps)
    before = load_plan(path)
    assert before.plan is not None
    expected = _derived(before.plan)

    def run() -> list[str]:
        runtime = Runtime(
            StepServices(HandlerInvoker({}), SecretStore(env={})),
            journal=Journal(tmp_path / "runs.sqlite3"),
            audit=MemoryAuditSink(),
        )
        options = LaunchOptions(
            unsigned=True,
            out_dir=tmp_path / "out",
            approvals=Approvals(),
            settings=StepSettings(),
        )
        result = asyncio.run(launch(path, options, runtime))
        runtime.journal.close()
        assert result.status == "completed", result.error
        return sorted(result.outputs) if isinstance(result.outputs, dict) else []

    assert run() == run()
    after = load_plan(path)
    assert after.plan is not None
    assert _derived(after.plan) == expected
    clear_parse_cache()
    fresh = load_plan(path)
    assert fresh.plan is not None and _derived(fresh.plan) == expected


def test_stamps_of_other_data_are_not_used(tmp_path: Path) -> None:
    from flightdeck.flightplan.model._read import read_again, step_stamp

    steps = [
        {"id": "a", "kind": "transform", "bindings": {"x": "inputs.seed"}, "outputs": ["v"]},
        {"id": "b", "kind": "transform", "bindings": {"x": "steps.a.v"}, "outputs": ["v"]},
    ]
    plan = load_plan(_write(tmp_path, steps)).plan
    assert plan is not None
    stamps = tuple(map(step_stamp, plan.steps))
    other = {"aileron": {"steps": [{"id": "b", "kind": "tool"}, {"id": "a"}]}}
    assert read_again(other, "", stamps) == read_plan(other)
    shorter = {"aileron": {"steps": [steps[0]]}}
    assert read_again(shorter, "", stamps) == read_plan(shorter)
