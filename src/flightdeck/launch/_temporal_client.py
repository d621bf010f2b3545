"""Start a run on Temporal: the launcher's side of `launch --executor temporal`.

`launch()` verifies the plan, resolves its inputs and records the run as
always; then `TemporalEngine.run` hands the prepared walk, as plain data, to
a `FlightPlanWorkflow` whose id is the run id, and either waits for its
result or returns at once (`detach`). From then on the run lives on the
Temporal cluster and its workers: killing the launcher does not stop it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from flightdeck.launch._conclude import RunResult
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._temporal_workflow import FlightPlanWorkflow, state_to_dict

if TYPE_CHECKING:
    from flightdeck.launch._launch import VerifiedTarget
    from flightdeck.launch._scheduler import Scheduler

DEFAULT_TASK_QUEUE = "flightdeck"


async def connect(address: str, namespace: str = "default") -> Client:
    try:
        return await Client.connect(address, namespace=namespace)
    except RuntimeError as exc:  # the SDK's connection failure
        raise LaunchError(
            "temporal.unavailable",
            f"cannot reach the Temporal frontend at {address}: {exc}",
            hint="start a server (temporal server start-dev) or pass --temporal HOST:PORT",
        ) from None


@dataclass
class TemporalEngine:
    """A `RunEngine` that runs the walk as a Temporal workflow. Without
    `hold_for_approval` a step left pending approval ends the run as
    `pending-approval`, as locally; with it (the default when detached) the
    run stays open until an `approve`/`deny` signal decides the step."""

    address: str
    task_queue: str = DEFAULT_TASK_QUEUE
    namespace: str = "default"
    detach: bool = False
    step_timeout: float = 3600.0  # one step, its runtime retries included
    heartbeat_timeout: float = 30.0  # how soon a dead worker's step moves on
    hold_for_approval: bool | None = None
    tool_task_queue: str | None = None  # tool steps go here when set

    async def run(self, scheduler: Scheduler, verified: VerifiedTarget, out_dir: Path) -> RunResult:
        client = await connect(self.address, self.namespace)
        spec = self.spec(scheduler, verified, out_dir)
        try:
            handle = await client.start_workflow(
                FlightPlanWorkflow.run,
                spec,
                id=scheduler.run_id,
                task_queue=self.task_queue,
            )
        except WorkflowAlreadyStartedError:
            raise _run_open(scheduler.run_id) from None
        plan = verified.plan.name or "?"
        if self.detach:
            return RunResult(scheduler.run_id, "running", plan, out_dir)
        try:
            data: dict[str, Any] = await handle.result()
        except WorkflowFailureError as exc:
            cause = str(exc.cause) if exc.cause is not None else str(exc)
            raise LaunchError("temporal.run_failed", f"run {scheduler.run_id}: {cause}") from None
        return result_from_dict(data)

    async def check_resumable(self, run_id: str) -> None:
        client = await connect(self.address, self.namespace)
        try:
            described = await client.get_workflow_handle(run_id).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:  # never started (launcher lost before)
                return
            raise LaunchError(
                "temporal.unavailable", f"cannot ask {self.address} about run {run_id}: {exc}"
            ) from None
        if described.status == WorkflowExecutionStatus.RUNNING:
            raise _run_open(run_id)

    def spec(self, scheduler: Scheduler, verified: VerifiedTarget, out_dir: Path) -> dict[str, Any]:
        plan = verified.plan
        hold = self.detach if self.hold_for_approval is None else self.hold_for_approval
        return {
            "run_id": scheduler.run_id,
            # YAML may give dates; the workflow input is JSON.
            "plan": json.loads(json.dumps(plan.data, default=str)),
            "body": plan.body,
            "path": str(verified.path),
            "content_hash": verified.content_hash,
            "version": verified.version,
            "publisher": verified.publisher,
            "signer": verified.signer,
            "unsigned": verified.unsigned,
            "inputs": dict(scheduler.inputs),
            "launch_time": scheduler.launch_time,
            "approve": sorted(scheduler.approvals.approve),
            "decisions": dict(scheduler.approvals.decisions),
            "settings": scheduler.settings.to_dict(),
            "max_parallel": scheduler.max_parallel,
            "replay": dict(scheduler.replay),
            "state": state_to_dict(scheduler.state),
            "out_dir": str(out_dir),
            "task_queue": self.task_queue,
            "tool_task_queue": self.tool_task_queue,
            "step_timeout": self.step_timeout,
            "heartbeat_timeout": self.heartbeat_timeout,
            "hold_for_approval": hold,
        }


def _run_open(run_id: str) -> LaunchError:
    return LaunchError(
        "temporal.run_open",
        f"run {run_id} is still open on Temporal (its workers are walking it or it waits"
        " for an approval)",
        hint=f"wait for it to end, or decide its pending steps: flightdeck runs approve {run_id}"
        " STEP",
    )


def result_from_dict(data: dict[str, Any]) -> RunResult:
    error = data.get("error")
    journal = data.get("journal")
    return RunResult(
        data["run_id"],
        data["status"],
        data["plan"],
        Path(data["out_dir"]),
        outputs=list(data.get("outputs", [])),
        error=LaunchError.from_dict(error) if error else None,
        steps=dict(data.get("steps", {})),
        pending=list(data.get("pending_approval", [])),
        journal=Path(journal) if journal else None,
        audit=data.get("audit"),
    )


async def signal_approval(
    address: str, run_id: str, steps: list[str], *, deny: bool = False, namespace: str = "default"
) -> None:
    """Approve (or deny) steps an open run holds for (`runs approve`)."""
    client = await connect(address, namespace)
    handle = client.get_workflow_handle(run_id)
    signal = FlightPlanWorkflow.deny if deny else FlightPlanWorkflow.approve
    try:
        await handle.signal(signal, steps)
    except RPCError as exc:
        raise LaunchError(
            "temporal.no_open_run",
            f"no open run {run_id} on {address}: {exc.message}",
            hint="only a detached run that holds for an approval takes a signal",
        ) from None


async def wait_for_run(address: str, run_id: str, namespace: str = "default") -> RunResult:
    """The result of a (detached) run, once it ends."""
    client = await connect(address, namespace)
    data: dict[str, Any] = await client.get_workflow_handle(run_id).result()
    return result_from_dict(data)
