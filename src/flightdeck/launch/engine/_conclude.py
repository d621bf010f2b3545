"""Conclude a walk: settle the run's status, materialize the declared
outputs, and write the `launch.output` and `launch.finish` records.

A walk that stopped at steps waiting for an approval has paused the run,
not finished it: it writes `launch.pause` and fires `approval.waiting` per
step, never `run.finished`. The run finishes (one `launch.finish`, one
`run.finished`) when a later walk ends it completed or failed: a resume,
or, on Temporal, the same workflow once a signal decides the steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.audit import AuditSink
from flightdeck.flightplan import FlightPlan
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._audit import AuditRouter
from flightdeck.launch.engine._journal import Journal
from flightdeck.launch.engine._outputs import materialize
from flightdeck.launch.engine._scheduler import StepState
from flightdeck.launch.engine._target import VerifiedTarget


@dataclass
class RunResult:
    run_id: str
    status: str  # completed | failed | pending-approval
    plan: str
    out_dir: Path
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: LaunchError | None = None
    steps: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    journal: Path | str | None = None  # its file, or the store URL without its password
    audit: str | None = None
    probes: list[dict[str, Any]] = field(default_factory=list)  # --verify-credentials
    warnings: list[str] = field(default_factory=list)  # e.g. "code not pinned"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "plan": self.plan,
            "out_dir": str(self.out_dir),
            "outputs": self.outputs,
            "error": self.error.to_dict() if self.error else None,
            "steps": self.steps,
            "pending_approval": self.pending,
            "journal": str(self.journal) if self.journal else None,
            "audit": self.audit,
            "credential_probes": self.probes,
            "warnings": self.warnings,
        }


def conclude(
    verified: VerifiedTarget,
    run_id: str,
    state: StepState,
    out_dir: Path,
    journal: Journal,
    audit: AuditSink,
    router: AuditRouter,
) -> RunResult:
    plan = verified.plan
    statuses = {step.id: _status(step.id, state) for step in plan.steps}
    result = RunResult(
        run_id,
        "completed",
        plan.name or "?",
        out_dir,
        steps=statuses,
        journal=journal.path,
        audit=_audit_where(audit),
    )
    if state.failed:
        # A failed source read (`inputs.NAME`, on a worker) is no plan step.
        first = next((step.id for step in plan.steps if step.id in state.failed), None)
        first = first if first is not None else next(iter(state.failed))
        result.status, result.error = "failed", LaunchError.from_dict(state.failed[first])
    elif state.pending:
        result.status = "pending-approval"
        result.pending = [step.id for step in plan.steps if step.id in state.pending]
    else:
        try:
            result.outputs = materialize_all(plan, state, out_dir, run_id, journal, router)
        except LaunchError as exc:
            result.status, result.error = "failed", exc
    journal.set_run_status(run_id, result.status, result.error.to_dict() if result.error else None)
    if result.status == "pending-approval":
        router.write(run_id, "launch.pause", {"pending_approval": result.pending})
    else:
        router.write(
            run_id,
            "launch.finish",
            {"status": result.status, "error": result.error.to_dict() if result.error else None},
        )
    _fire_events(result, router)
    return result


def _fire_events(result: RunResult, router: AuditRouter) -> None:
    """`approval.waiting` per step that stopped for approval, else `run.finished`
    (docs/launch.md, lifecycle events): notifications, after the journal and
    the audit have the facts."""
    from flightdeck.audit import fire

    for step in result.pending:
        fire(
            "approval.waiting",
            source="launch",
            run_id=result.run_id,
            fields={"plan": result.plan, "step": step},
            audit=router.default,
        )
    if result.pending:
        return
    fire(
        "run.finished",
        source="launch",
        run_id=result.run_id,
        fields={
            "plan": result.plan,
            "status": result.status,
            "error": result.error.code if result.error else None,
        },
        audit=router.default,
    )


def _status(step_id: str, state: StepState) -> str:
    if step_id in state.done:
        return "completed"
    if step_id in state.failed:
        return "failed"
    if step_id in state.pending:
        return "pending-approval"
    return "blocked"


def _limit() -> int:
    from flightdeck.config import ConfigError
    from flightdeck.config._database import output_limit

    try:
        return output_limit()
    except ConfigError as exc:
        raise LaunchError(exc.code, f"{exc.path}: {exc.message}") from None


def materialize_all(
    plan: FlightPlan,
    state: StepState,
    out_dir: Path,
    run_id: str,
    journal: Journal,
    router: AuditRouter,
) -> list[dict[str, Any]]:
    records = []
    for output in plan.outputs:
        step = next((s for s in plan.steps if s.materializes_output == output.name), None)
        if step is None or step.id not in state.done:
            raise LaunchError(
                "output.missing",
                f"declared output {output.name!r} was not produced"
                + (" (no step materializes it)" if step is None else f" by step {step.id}"),
            )
        memo = state.done[step.id]
        value = memo["outputs"][step.outputs[0]] if len(step.outputs) == 1 else memo["result"]
        # A file's content is kept too in a PostgreSQL store: there the
        # outputs reach any machine (`runs outputs`), not only the folder of
        # the one that concluded the run. What is kept is bounded (in rows of
        # a chunk each, and in all by `[store] max_output_bytes`).
        stored = output.publish_target != "file" or journal.url is not None
        try:
            made = materialize(output, value, out_dir, _limit() if stored else None)
        except LaunchError as exc:
            exc.step = step.id
            raise
        record = {**made.record, "step": step.id}
        journal.output(run_id, record, made.content if stored else None)
        router.write(run_id, "launch.output", record)
        records.append(record)
    return records


def _audit_where(sink: AuditSink) -> str | None:
    path = getattr(sink, "path", None)
    return str(path) if path is not None else None
