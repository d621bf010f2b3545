"""Start a run on Temporal: the launcher's side of `launch --executor temporal`.

`launch()` verifies the plan, resolves its inputs and records the run as
always, except that a new run's `source` reads are left to the workflow,
which makes them on a worker before the first step (`reads_sources`); then
`TemporalEngine.run` hands the prepared walk, as plain data, to a
`FlightPlanWorkflow` whose id is the run id, and either waits for its
result or returns at once (`detach`). From then on the run lives on the
Temporal cluster and its workers: killing the launcher does not stop it.

Asking the cluster about a run fails closed: an answer other than "this
workflow" or "no such workflow" (NOT_FOUND) refuses the resume or the
approval. NOT_FOUND means the cluster has no history of the run: it never
started there (its launcher was lost before), or its history is gone (the
namespace's retention removed it after it closed, or an in-memory dev server
restarted). Nothing walks it there any more, so a resume on the cluster the
run recorded proceeds from the journal; on another address or namespace the
run may be open where it lives, so the resume is refused.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from flightdeck._json import json_copy
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._conclude import RunResult
from flightdeck.launch.engine._probe import ProbeResult
from flightdeck.launch.temporal._rounds import state_to_dict
from flightdeck.launch.temporal._workflow import CredentialProbeWorkflow, FlightPlanWorkflow

if TYPE_CHECKING:
    from flightdeck.flightplan import FlightPlan
    from flightdeck.launch.engine._scheduler import Scheduler
    from flightdeck.launch.engine._target import VerifiedTarget

DEFAULT_TASK_QUEUE = "flightdeck"
# The statuses of a workflow that no longer walks its run: a resume may
# start it again. Anything else (running, continued, unknown) is refused.
CLOSED = frozenset(
    {
        WorkflowExecutionStatus.COMPLETED,
        WorkflowExecutionStatus.FAILED,
        WorkflowExecutionStatus.CANCELED,
        WorkflowExecutionStatus.TERMINATED,
        WorkflowExecutionStatus.TIMED_OUT,
    }
)
# A query needs a live worker to answer; without one the hint does without it.
_QUERY_TIMEOUT = timedelta(seconds=5)


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
    executor: ClassVar[str] = "temporal"  # what the journal records for its runs
    reads_sources: ClassVar[bool] = True  # source inputs are read on a worker

    def cluster(self) -> dict[str, Any]:
        """Where its runs live, as the journal records it."""
        return {
            "address": self.address,
            "namespace": self.namespace,
            "task_queue": self.task_queue,
            "tool_task_queue": self.tool_task_queue,
        }

    async def run(
        self,
        scheduler: Scheduler,
        verified: VerifiedTarget,
        out_dir: Path,
        deferred: Mapping[str, Any] | None = None,
    ) -> RunResult:
        client = await connect(self.address, self.namespace)
        spec = self.spec(scheduler, verified, out_dir)
        if deferred is not None:  # read first, on a worker (`_workflow.read_sources`)
            spec["sources"] = json_copy(dict(deferred), default=str)
        try:
            handle = await client.start_workflow(
                FlightPlanWorkflow.run,
                spec,
                id=scheduler.run_id,
                task_queue=self.task_queue,
            )
        except WorkflowAlreadyStartedError:
            raise _run_open(scheduler.run_id, self.address, self.namespace, None) from None
        except RPCError as exc:
            raise _unavailable(self.address, f"cannot start run {scheduler.run_id}", exc) from None
        plan = verified.plan.name or "?"
        if self.detach:
            return RunResult(scheduler.run_id, "running", plan, out_dir)
        try:
            data: dict[str, Any] = await handle.result()
        except WorkflowFailureError as exc:
            cause = str(exc.cause) if exc.cause is not None else str(exc)
            raise LaunchError("temporal.run_failed", f"run {scheduler.run_id}: {cause}") from None
        except RPCError as exc:  # the run goes on; only this launcher lost it
            raise _unavailable(self.address, f"lost run {scheduler.run_id}", exc) from None
        return result_from_dict(data)

    async def verify_credentials(self, plan: FlightPlan, run_id: str) -> list[ProbeResult]:
        """Run the plan's credential probes on a worker of the run's task
        queue (`CredentialProbeWorkflow`), where its steps will run; each is
        audited there. The launcher needs neither the secrets nor the reach."""
        client = await connect(self.address, self.namespace)
        spec = {
            "run_id": run_id,
            "plan": json_copy(plan.data, default=str),
            "body": plan.body,
            "task_queue": self.task_queue,
            "step_timeout": self.step_timeout,
            "heartbeat_timeout": self.heartbeat_timeout,
        }
        try:
            data: list[dict[str, Any]] = await client.execute_workflow(
                CredentialProbeWorkflow.run, spec, id=f"{run_id}/verify", task_queue=self.task_queue
            )
        except WorkflowFailureError as exc:
            cause = str(exc.cause) if exc.cause is not None else str(exc)
            raise LaunchError(
                "credential.verification_failed",
                f"the credential probes of run {run_id} did not finish on a worker: {cause}",
                hint="check that workers serve the task queue, then launch again",
            ) from None
        except RPCError as exc:
            raise _unavailable(self.address, f"cannot verify run {run_id}", exc) from None
        return [ProbeResult.from_dict(item) for item in data]

    async def check_resumable(self, run_id: str, recorded: Mapping[str, Any] | None = None) -> None:
        """Refuse a resume unless this cluster says the run's workflow is
        closed, or has none and is the cluster the run recorded (`recorded`,
        None for a run recorded before clusters were: as that one)."""
        client = await connect(self.address, self.namespace)
        handle = client.get_workflow_handle(run_id)
        try:
            described = await handle.describe()
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise _unavailable(self.address, f"cannot ask about run {run_id}", exc) from None
            if recorded is not None and not self._is(recorded):
                raise _elsewhere(run_id, self.address, self.namespace, recorded) from None
            return  # never started here, or its history is gone: the journal decides
        if described.status not in CLOSED:
            waiting = await _waiting(handle)
            raise _run_open(run_id, self.address, self.namespace, waiting)

    def _is(self, recorded: Mapping[str, Any]) -> bool:
        where = (recorded.get("address"), recorded.get("namespace", "default"))
        return where == (self.address, self.namespace)

    def spec(self, scheduler: Scheduler, verified: VerifiedTarget, out_dir: Path) -> dict[str, Any]:
        plan = verified.plan
        hold = self.detach if self.hold_for_approval is None else self.hold_for_approval
        return {
            "run_id": scheduler.run_id,
            # YAML may give dates; the workflow input is JSON.
            "plan": json_copy(plan.data, default=str),
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


def _unavailable(address: str, what: str, exc: RPCError) -> LaunchError:
    status = exc.status.name if exc.status is not None else "an error"
    return LaunchError(
        "temporal.unavailable",
        f"{what}: the Temporal frontend at {address} answered {status}: {exc.message}",
        hint="check the server and try again; nothing was decided",
    )


def command(*argv: str) -> str:
    """A `flightdeck` command line, quoted for a POSIX shell."""
    return shlex.join(["flightdeck", *argv])


def _at(address: str, namespace: str) -> list[str]:
    return ["--temporal", address] + (["--namespace", namespace] if namespace != "default" else [])


async def _waiting(handle: WorkflowHandle[Any, Any]) -> list[str] | None:
    """The steps an open run holds for, if a worker answers the query."""
    try:
        steps: list[str] = await handle.query(
            FlightPlanWorkflow.waiting, rpc_timeout=_QUERY_TIMEOUT
        )
    except (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError):
        return None
    return steps


def _run_open(run_id: str, address: str, namespace: str, waiting: list[str] | None) -> LaunchError:
    message = f"run {run_id} is still open on Temporal at {address}"
    if waiting:
        steps = ", ".join(waiting)
        hint = "approve (or --deny) the steps it waits for: " + command(
            "runs", "approve", run_id, *waiting, *_at(address, namespace)
        )
        return LaunchError(
            "temporal.run_open", f"{message}: it waits for approval of {steps}", hint=hint
        )
    return LaunchError(
        "temporal.run_open",
        f"{message}: its workers are walking it (or hold it for an approval)",
        hint="wait for it to end, then resume it if it did not complete; see where it is: "
        + command("runs", "show", run_id, *_at(address, namespace)),
    )


def _elsewhere(
    run_id: str, address: str, namespace: str, recorded: Mapping[str, Any]
) -> LaunchError:
    there = str(recorded.get("address"))
    there_ns = str(recorded.get("namespace", "default"))
    return LaunchError(
        "temporal.run_not_found",
        f"no run {run_id} on {address} (namespace {namespace}); it was launched on {there}"
        f" (namespace {there_ns}) and may still be open there",
        hint="resume it where it lives: "
        + command("launch", "--resume", run_id, "--executor", "temporal", "--temporal", there),
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
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise _unavailable(address, f"cannot signal run {run_id}", exc) from None
        raise LaunchError(
            "temporal.no_open_run",
            f"no open run {run_id} on {address}: {exc.message}",
            hint="only a detached run that holds for an approval takes a signal; a run that"
            " ended pending approval resumes with its approvals: "
            + command(
                "launch",
                "--resume",
                run_id,
                *[arg for step in steps for arg in ("--approve", step)],
            ),
        ) from None


async def describe_run(address: str, run_id: str, namespace: str = "default") -> dict[str, Any]:
    """What the cluster says of a run (`runs show`): its workflow's status
    (None: the cluster has no history of it) and the steps it holds for."""
    client = await connect(address, namespace)
    handle = client.get_workflow_handle(run_id)
    try:
        described = await handle.describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise _unavailable(address, f"cannot ask about run {run_id}", exc) from None
        return {"workflow": None, "waiting": []}
    status = described.status.name if described.status is not None else "UNKNOWN"
    open_run = described.status not in CLOSED
    # `waiting` is None when no worker answered the query.
    return {"workflow": status, "waiting": await _waiting(handle) if open_run else []}


async def wait_for_run(address: str, run_id: str, namespace: str = "default") -> RunResult:
    """The result of a (detached) run, once it ends."""
    client = await connect(address, namespace)
    data: dict[str, Any] = await client.get_workflow_handle(run_id).result()
    return result_from_dict(data)
