"""The action call of a `source` input's read, as a `StepTask`.

Built in the launcher on either executor, so that the approval of the read
(`--approve inputs.NAME`) is decided before any run exists: locally the
launcher runs the task itself; on Temporal it hands the task to the
workflow, which runs it as a step activity on a worker (docs/launch.md,
"What runs where"), where the action's credentials and network reach are.
"""

from __future__ import annotations

from typing import Any

from flightdeck.flightplan import FlightPlan, Input
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._task import StepSettings, StepTask
from flightdeck.launch.engine._approval import Approvals


def source_task(
    plan: FlightPlan,
    item: Input,
    approvals: Approvals,
    settings: StepSettings,
    run_id: str,
) -> StepTask:
    ref = item.resolution.source_action_ref or ""
    requirement = plan.action(ref)
    if requirement is None or requirement.trust_contract is None:
        raise LaunchError("action.undeclared", f"source {ref} is not in requires.actions")
    step_id = f"inputs.{item.name}"
    approval = approvals.decide(step_id, ref, requirement.trust_contract.effect)
    if not (approval.startswith("approved") or approval == "not-required"):
        raise LaunchError(
            "approval.required",
            f"the source read of input {item.name} ({ref}) needs approval",
            hint=f"--approve {step_id}",
        )
    return StepTask(
        run_id=run_id,
        step_id=step_id,
        kind="action-call",
        step={"id": step_id, "kind": "action-call", "actionRef": ref},
        values={},
        # A source read binds no value, so it needs no launch time (it is
        # read before the launch time is recorded with the run).
        launch_time="",
        contract=dict(requirement.trust_contract.raw),
        approval=approval,
        settings=settings,
    )


def deferred_sources(
    plan: FlightPlan, approvals: Approvals, settings: StepSettings, run_id: str
) -> list[dict[str, Any]]:
    """The source reads a Temporal run makes on a worker: `{input, task}`
    each, in declaration order (the order a local launch reads them)."""
    return [
        {"input": item.name, "task": source_task(plan, item, approvals, settings, run_id).to_dict()}
        for item in plan.inputs
        if item.resolution.rule == "source"
    ]
