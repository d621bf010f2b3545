"""The plan both kill -9 campaigns launch (local and Temporal): a chain of four
ledger writes, two that must happen exactly once (`append`, not safe to
retry) and two idempotent ones (`put`), the last publishing `done.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import contract, write_plan

NON_IDEMPOTENT = ("w1", "w2")
IDEMPOTENT = ("i1", "i2")
STEPS = ("w1", "i1", "w2", "i2")  # the chain, in order


def _step(step_id: str, after: str | None) -> dict[str, Any]:
    tool = "append" if step_id in NON_IDEMPOTENT else "put"
    args = {"text": f"inputs.t_{step_id}"}
    if after:
        args["after"] = f"steps.{after}.receipt"
    return {
        "id": step_id,
        "kind": "action-call",
        "actionRef": f"aileron:ledger.{tool}",
        "args": args,
        "outputs": ["receipt"],
    }


def ledger_plan(folder: Path) -> Path:
    """Write the plan's SKILL.md into `folder` and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    after = (None, *STEPS[:-1])  # each step waits for the one before
    steps = [_step(step_id, before) for step_id, before in zip(STEPS, after, strict=True)]
    steps[-1]["materializesOutput"] = "done.json"
    unsafe = {"safeToRetry": False, "idempotencyKey": False}
    return write_plan(
        folder,
        inputs=[
            {"name": f"t_{s}", "type": "string", "resolution": {"rule": "literal", "default": s}}
            for s in STEPS
        ],
        actions={
            "aileron:ledger.append": contract(effect="write", idempotency=unsafe),
            "aileron:ledger.put": contract(
                effect="write", idempotency={"safeToRetry": True, "idempotencyKey": False}
            ),
        },
        outputs=[
            {
                "name": "done.json",
                "mimeType": "application/json",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "done.json"},
            }
        ],
        steps=steps,
    )
