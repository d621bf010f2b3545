"""What a resumed or replayed run takes from the journal.

- `memoised`: completed steps of the run, with their recorded results; they
  are never run again.
- `in_doubt`: steps journaled `started` but never finished (the process was
  killed mid-step). An action call that is neither `safeToRetry` nor keyed
  by an idempotency key may already have taken effect, so it is NOT re-run:
  it fails with `resume.in_doubt` and the operator checks the target system.
  It stays held on every later resume until the operator records a
  decision: `accept` (it took effect; these are its outputs) or `retry` (run
  it again). The decision is journaled and audited with who and when.
  Everything else re-runs (a keyed call reuses its key, so the connector
  de-duplicates).
- `replay_outputs`: the recorded llm-seam outputs of another run of the same
  plan, for `--replay`.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flightdeck.flightplan import FlightPlan
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._journal import Journal
from flightdeck.launch.engine._rows import RunRow
from flightdeck.launch.engine._scheduler import StepState


def memoised(journal: Journal, plan: FlightPlan, run_id: str) -> StepState:
    state = StepState()
    known = {step.id for step in plan.steps}
    for row in journal.steps(run_id):
        if row.status == "completed" and row.step_id in known and isinstance(row.result, dict):
            state.done[row.step_id] = row.result
    return state


@dataclass(frozen=True)
class ResumeDecisions:
    """The operator's word on in-doubt steps, given with `launch --resume`."""

    accept: Mapping[str, dict[str, Any]] = field(default_factory=dict)  # step -> outputs
    retry: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.accept) or bool(self.retry)


AuditWrite = Callable[[str, str, dict[str, Any]], None]


def _held(row_status: str, error: dict[str, Any] | None) -> bool:
    # `started`: killed mid-call. `failed` with resume.in_doubt: refused by an
    # earlier resume and still undecided; without this a second resume would
    # run the write again.
    if row_status == "started":
        return True
    return row_status == "failed" and (error or {}).get("code") == "resume.in_doubt"


def _operator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER
        return "unknown"


def in_doubt(
    journal: Journal,
    plan: FlightPlan,
    run_id: str,
    state: StepState,
    decisions: ResumeDecisions | None = None,
    audit: AuditWrite | None = None,
) -> None:
    decisions = decisions or ResumeDecisions()
    held: set[str] = set()
    for row in journal.steps(run_id):
        step = plan.step(row.step_id)
        if not _held(row.status, row.error) or step is None or step.kind != "action-call":
            continue
        requirement = plan.action(step.action_ref or "")
        contract = requirement.trust_contract if requirement else None
        if contract is not None and (contract.safe_to_retry or contract.idempotency_key):
            continue
        held.add(step.id)
        if step.id in decisions.accept or step.id in decisions.retry:
            _decide(journal, run_id, step.id, state, decisions, audit)
            continue
        error = LaunchError(
            "resume.in_doubt",
            f"step {step.id} ({step.action_ref}) was interrupted mid-call and is not safe to"
            " retry; it may already have taken effect, so it is not run again",
            step=step.id,
            hint=f"check the target system; then resume with --accept {step.id}=OUTPUTS_JSON"
            f" (it took effect) or --retry {step.id} (run it again)",
        ).to_dict()
        state.failed[step.id] = error
        journal.step_finished(run_id, step.id, "action-call", "failed", error=error)
    stray = sorted((set(decisions.accept) | decisions.retry) - held)
    if stray:
        raise LaunchError(
            "resume.not_in_doubt",
            f"no in-doubt step {', '.join(stray)} in run {run_id}",
            hint="--accept and --retry name steps a resume reported as resume.in_doubt",
        )


def _decide(
    journal: Journal,
    run_id: str,
    step_id: str,
    state: StepState,
    decisions: ResumeDecisions,
    audit: AuditWrite | None,
) -> None:
    accepted = step_id in decisions.accept
    fields: dict[str, Any] = {
        "step": step_id,
        "decision": "accept" if accepted else "retry",
        "by": _operator(),
    }
    if accepted:
        memo = {"result": None, "outputs": dict(decisions.accept[step_id]), "accepted": True}
        fields["outputs"] = memo["outputs"]
        journal.step_finished(run_id, step_id, "action-call", "completed", result=memo)
        state.done[step_id] = memo
    else:
        # Left undone: the scheduler runs it again like any unfinished step.
        journal.step_started(run_id, step_id, "action-call", None)
    if audit is not None:
        audit(run_id, "resume.decision", fields)


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
