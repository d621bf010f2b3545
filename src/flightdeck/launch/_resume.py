"""What a resumed or replayed run takes from the journal.

- `memoised`: completed steps of the run, with their recorded results; they
  are never run again.
- `in_doubt`: steps journaled `started` but never finished (the process was
  killed mid-step). An action call that is neither `safeToRetry` nor keyed
  by an idempotency key may already have taken effect, so it is NOT re-run:
  it fails with `resume.in_doubt` and the operator checks the target system.
  Everything else re-runs (a keyed call reuses its key, so the connector
  de-duplicates).
- `replay_outputs`: the recorded llm-seam outputs of another run of the same
  plan, for `--replay`.
"""

from __future__ import annotations

from typing import Any

from flightdeck.flightplan import FlightPlan
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._journal import Journal, RunRow
from flightdeck.launch._scheduler import StepState


def memoised(journal: Journal, plan: FlightPlan, run_id: str) -> StepState:
    state = StepState()
    known = {step.id for step in plan.steps}
    for row in journal.steps(run_id):
        if row.status == "completed" and row.step_id in known and isinstance(row.result, dict):
            state.done[row.step_id] = row.result
    return state


def in_doubt(journal: Journal, plan: FlightPlan, run_id: str, state: StepState) -> None:
    for row in journal.steps(run_id):
        step = plan.step(row.step_id)
        if row.status != "started" or step is None or step.kind != "action-call":
            continue
        requirement = plan.action(step.action_ref or "")
        contract = requirement.trust_contract if requirement else None
        if contract is not None and (contract.safe_to_retry or contract.idempotency_key):
            continue
        error = LaunchError(
            "resume.in_doubt",
            f"step {step.id} ({step.action_ref}) was interrupted mid-call and is not safe to"
            " retry; it may already have taken effect, so it is not run again",
            step=step.id,
            hint="check the target system; then launch a new run",
        ).to_dict()
        state.failed[step.id] = error
        journal.step_finished(run_id, step.id, "action-call", "failed", error=error)


def replay_outputs(
    journal: Journal, replayed: RunRow | None, content_hash: str
) -> dict[str, dict[str, Any]]:
    if replayed is None:
        return {}
    if replayed.content_hash != content_hash:
        raise LaunchError(
            "replay.plan_mismatch",
            f"run {replayed.run_id} ran plan {replayed.content_hash}, not {content_hash}",
        )
    return {
        row.step_id: row.result
        for row in journal.steps(replayed.run_id)
        if row.kind == "llm-seam" and row.status == "completed" and isinstance(row.result, dict)
    }
