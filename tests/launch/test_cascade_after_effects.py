"""A round whose transaction holds the completion of a step with effects (an
action call) commits it before any transform runs: a kill -9 during a
cascade never leaves a finished call looking unfinished (`resume.in_doubt`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from flightdeck.launch import ActionCall, register_transform
from flightdeck.launch._transforms import _REGISTRY

from .conftest import Harness, contract, write_plan


def test_a_transform_after_an_action_call_sees_its_completion_on_disk(tmp_path: Path) -> None:
    harness = Harness(tmp_path)
    seen: dict[str, dict[str, str]] = {}

    def rows() -> dict[str, str]:
        with sqlite3.connect(harness.journal.path) as other:  # as a resume would
            return dict(other.execute("SELECT step_id, status FROM steps").fetchall())

    def look(bindings: dict[str, object], ctx: object) -> int:
        seen[str(getattr(ctx, "step_id", "?"))] = rows()
        return 1

    async def call(action: ActionCall) -> dict[str, Any]:
        return {"v": 1}

    harness.handlers["svc.call"] = call
    register_transform("look_after_test", look)
    steps: list[dict[str, Any]] = [
        {"id": "t0", "kind": "transform", "transform": "look_after_test", "outputs": ["v"]},
        {
            "id": "c",
            "kind": "action-call",
            "actionRef": "aileron:svc.call",
            "args": {"x": "steps.t0.v"},
            "outputs": ["v"],
        },
        {
            "id": "t1",
            "kind": "transform",
            "transform": "look_after_test",
            "bindings": {"x": "steps.c.v"},
            "outputs": ["v"],
        },
        {
            "id": "t2",
            "kind": "transform",
            "transform": "look_after_test",
            "bindings": {"x": "steps.t1.v"},
            "outputs": ["v"],
        },
    ]
    try:
        plan = write_plan(tmp_path, steps=steps, actions={"aileron:svc.call": contract()})
        assert harness.run(plan).status == "completed"
    finally:
        _REGISTRY.pop("look_after_test", None)
    assert seen["t1"]["c"] == "completed"
    assert seen["t2"]["c"] == "completed"
