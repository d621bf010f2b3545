"""What the Flight Plan workflow does beside walking its graph: the buffer
its scheduler writes the journal and audit into, the executor that turns a
step into an activity and sends the buffered writes with it, the source
reads before the first step, and the error of a step whose worker was lost.

A module of its own, imported by the workflow through the sandbox's pass-
through: Temporal runs the workflow's own module afresh for every run, and
this one once per process. Nothing here keeps state between runs, reads a
clock, a file or a random source: each run builds its own `WriteBuffer` and
`ActivityExecutor`, and the `workflow` calls they make act on the run being
walked.

Worker loss: a step activity heartbeats; when its worker dies the heartbeat
times out. A step safe to run again (everything but an action call that is
neither `safeToRetry` nor keyed) is retried on another worker by the
activity's retry policy; any other is not retried and fails with
`resume.in_doubt`, exactly what a local resume records for it, so
`launch --resume RUN --accept|--retry STEP` decides it. A step's own failure
comes back as a value (the runtime's own retries already ran), never as an
activity failure, so Temporal never repeats a call the runtime gave up on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from flightdeck.flightplan import FlightPlan, TrustContract
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._sources import source_read, violation
from flightdeck.launch.core._task import StepOutcome, StepTask
from flightdeck.launch.engine._scheduler import StepState

WORKFLOW = "flightdeck.FlightPlan"
STEP_ACTIVITY = "flightdeck.step"
APPLY_ACTIVITY = "flightdeck.apply"
CONCLUDE_ACTIVITY = "flightdeck.conclude"
# `launch --verify-credentials`: the plan's probes, run on a worker.
PROBE_WORKFLOW = "flightdeck.VerifyCredentials"
PROBE_ACTIVITY = "flightdeck.probe"
# A step's activity whose batch of writes the store refused (the step did
# not run): the workflow applies the batch itself and runs the step again.
JOURNAL_UNAPPLIED = "flightdeck.JournalUnapplied"
# The patch (`workflow.patched`) under which a batch rides with a step or a
# conclusion instead of a local activity of its own.
JOURNAL_WITH_STEP = "journal-with-step"

# A batch rides with an activity only up to this size (as JSON). An
# activity's input is kept in the run's history, a local activity's is not,
# and Temporal refuses a payload over 2 MiB by default: a round's batch
# holds the results of the steps it finished, each of which the history
# already holds once, as its activity's result.
MAX_CARRIED_BYTES = 128 * 1024


def _encoded(ops: list[dict[str, Any]]) -> str:
    return json.dumps(ops, separators=(",", ":"), default=str)


# Journal and audit writes are upserts and appends on the worker's stores;
# a few quick tries cover a worker lost while applying them.
BOOKKEEPING = RetryPolicy(initial_interval=timedelta(seconds=0.2), maximum_attempts=5)


def safe_to_rerun(task: StepTask) -> bool:
    """As `engine._resume.in_doubt` decides: only an action call that is neither
    `safeToRetry` nor keyed by an idempotency key may have taken effect."""
    if task.kind != "action-call":
        return True
    contract = TrustContract.read(task.contract)
    return contract is not None and (contract.safe_to_retry or contract.idempotency_key)


class WriteBuffer:
    """The scheduler's journal and audit inside the workflow: each write is
    kept as plain data until `take()` hands them to an activity."""

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []

    @contextmanager
    def batch(self) -> Iterator[None]:
        yield  # the flush before the round's steps start is the transaction

    def step_started(self, run_id: str, step_id: str, kind: str, approval: str | None) -> None:
        self.ops.append(
            {"op": "step_started", "run_id": run_id, "step_id": step_id, "kind": kind}
            | {"approval": approval}
        )

    def step_finished(
        self,
        run_id: str,
        step_id: str,
        kind: str,
        status: str,
        *,
        attempts: int = 0,
        result: Any = None,
        error: dict[str, Any] | None = None,
        approval: str | None = None,
    ) -> None:
        self.ops.append(
            {"op": "step_finished", "run_id": run_id, "step_id": step_id, "kind": kind}
            | {"status": status, "attempts": attempts, "result": result}
            | {"error": error, "approval": approval}
        )

    def write(self, run_id: str, kind: str, fields: Mapping[str, Any]) -> None:
        self.ops.append({"op": "audit", "run_id": run_id, "kind": kind, "fields": dict(fields)})

    def run_inputs(self, run_id: str, inputs: Mapping[str, Any]) -> None:
        self.ops.append({"op": "run_inputs", "run_id": run_id, "inputs": dict(inputs)})

    def run_status(self, run_id: str, status: str) -> None:
        self.ops.append({"op": "run_status", "run_id": run_id, "status": status})

    def take(self) -> list[dict[str, Any]]:
        ops, self.ops = self.ops, []
        return ops


class ActivityExecutor:
    """The `Executor` inside the workflow: each step is one activity, its id
    `<run id>/<step id>`, on the run's task queue (a tool step on the tool
    queue when the run names one).

    The buffered writes reach the store in one of two ways. When a step is
    the only one waiting to start and is safe to run again, they ride with
    it: its activity applies them, in one transaction, before the step runs
    (one activity per step, as a hand-written workflow has). Otherwise (two
    steps start together, the step must not run twice, or the batch is too
    large to keep in the history twice) a local activity applies them
    first, and the steps start after it. Either way a batch has
    a key (this execution's id and a count), recorded in the transaction
    that applies it, so a batch sent again (a step retried on another
    worker) is applied once. Histories from before the first way keep the
    second (`workflow.patched`)."""

    def __init__(self, buffer: WriteBuffer, spec: Mapping[str, Any]) -> None:
        self.buffer = buffer
        self.spec = spec
        self.lock = asyncio.Lock()
        self.flushes = 0
        self.keyed = workflow.patched(JOURNAL_WITH_STEP)
        self.waiting: set[str] = set()

    def take(self) -> dict[str, Any] | None:
        """The buffered writes as one keyed batch (None: nothing buffered)."""
        ops = self.buffer.take()
        if not ops:
            return None
        self.flushes += 1
        key = f"{workflow.info().run_id}/{self.flushes}"
        return {"run_id": self.spec["run_id"], "key": key, "ops": ops}

    async def carried(self) -> dict[str, Any] | None:
        """Under `lock`: the buffered writes as a batch to send with the next
        activity; None when there are none, or when they are too large to
        ride and were applied by the local activity instead."""
        if len(_encoded(self.buffer.ops)) > MAX_CARRIED_BYTES:
            await self._flush()
            return None
        return self.take()

    async def flush(self) -> None:
        async with self.lock:
            await self._flush()

    async def _flush(self) -> None:
        batch = self.take()
        if batch is None:
            return
        # A local activity: it runs on the worker running this workflow
        # task, without a round trip through the server's queues.
        await workflow.execute_local_activity(
            APPLY_ACTIVITY,
            batch if self.keyed else batch["ops"],
            activity_id=f"{self.spec['run_id']}/journal/{self.flushes}",
            start_to_close_timeout=timedelta(seconds=60),
            retry_policy=BOOKKEEPING,
        )

    def queue(self, task: StepTask) -> str:
        # Tool steps need the sandbox and the image cache: they may go to the
        # workers that have them.
        if task.kind == "tool" and self.spec.get("tool_task_queue"):
            return str(self.spec["tool_task_queue"])
        return str(self.spec["task_queue"])

    def submit(self, task: StepTask) -> Coroutine[Any, Any, StepOutcome]:
        # Called as the scheduler starts the round's steps, before any of
        # them runs: when the first runs, `waiting` holds all of them.
        self.waiting.add(task.step_id)
        return self._submit(task)

    async def _submit(self, task: StepTask) -> StepOutcome:
        safe = safe_to_rerun(task)
        batch = None
        async with self.lock:
            if self.keyed and safe and self.waiting == {task.step_id}:
                batch = await self.carried()
            else:
                await self._flush()
            self.waiting.discard(task.step_id)
        try:
            return await self._step(task, safe, batch)
        except ActivityError as exc:
            if batch is None:
                return StepOutcome.failed(lost(task, safe, exc))
            # The step's activity refused the batch (the store did), or never
            # reported back: the batch may not be applied. Apply it as any
            # other (with the bookkeeping retries; once, by its key).
            await workflow.execute_local_activity(
                APPLY_ACTIVITY,
                batch,
                activity_id=f"{self.spec['run_id']}/journal/{batch['key']}",
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=BOOKKEEPING,
            )
            if not _unapplied(exc):
                return StepOutcome.failed(lost(task, safe, exc))
        try:  # the step did not run: it runs now, without the batch
            return await self._step(task, safe, None)
        except ActivityError as exc:
            return StepOutcome.failed(lost(task, safe, exc))

    async def _step(self, task: StepTask, safe: bool, batch: dict[str, Any] | None) -> StepOutcome:
        """The step's activity; raises `ActivityError` when it never answered."""
        settings = task.settings
        policy = RetryPolicy(
            initial_interval=timedelta(seconds=max(settings.retry_base_delay, 0.1)),
            maximum_attempts=max(settings.retry_attempts, 1) if safe else 1,
        )
        data = await workflow.execute_activity(
            STEP_ACTIVITY,
            args=[task.to_dict(), batch] if batch is not None else [task.to_dict()],
            activity_id=f"{task.run_id}/{task.step_id}",
            task_queue=self.queue(task),
            start_to_close_timeout=timedelta(seconds=float(self.spec["step_timeout"])),
            heartbeat_timeout=timedelta(seconds=float(self.spec["heartbeat_timeout"])),
            retry_policy=policy,
        )
        return StepOutcome.from_dict(data)


def _unapplied(exc: ActivityError) -> bool:
    cause = exc.cause
    return isinstance(cause, ApplicationError) and cause.type == JOURNAL_UNAPPLIED


def lost(task: StepTask, safe: bool, exc: ActivityError) -> dict[str, Any]:
    """The error of a step whose worker never reported back."""
    ref = task.step.get("actionRef")
    if not safe:
        return LaunchError(
            "resume.in_doubt",
            f"step {task.step_id} ({ref}) was interrupted mid-call (its worker was lost) and is"
            " not safe to retry; it may already have taken effect, so it is not run again",
            step=task.step_id,
            hint=f"check the target system; then resume with --accept {task.step_id}=OUTPUTS_JSON"
            f" (it took effect) or --retry {task.step_id} (run it again)",
        ).to_dict()
    cause = str(exc.cause) if exc.cause is not None else exc.message
    return LaunchError(
        "temporal.step_lost",
        f"step {task.step_id} did not finish on any worker: {cause}",
        step=task.step_id,
        hint="check that workers serve the task queue; the run can be resumed",
    ).to_dict()


async def read_sources(
    plan: FlightPlan, spec: dict[str, Any], executor: ActivityExecutor, buffer: WriteBuffer
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read the run's `source` inputs before its first step, each as a step
    activity (`inputs.NAME`) on the step queue: the worker's credentials and
    reach, and a step's rules when its worker is lost (a read neither
    `safeToRetry` nor keyed is not read again: `resume.in_doubt`). Then the
    run's inputs and its `launch.run` record (with `source_reads`) are
    written as a local launch writes them. Returns the spec with every input
    and, when a read failed, `{inputs.NAME: error}` instead."""
    run_id, deferred = spec["run_id"], spec["sources"]
    items = {item.name: item for item in plan.inputs}
    values, reads = dict(spec["inputs"]), []
    for entry in deferred["reads"]:
        item, task = items[entry["input"]], StepTask.from_dict(entry["task"])
        outcome = await executor.submit(task)
        error = outcome.error or {"code": "input.source_unavailable", "message": "no result"}
        if outcome.status == "completed":
            value, read = source_read(
                item.name,
                item.resolution.source_action_ref,
                item.resolution.source_select,
                outcome.result,
            )
            broken = violation(item.name, item.violation(value))
            if broken is None:
                values[item.name] = value
                reads.append(read)
                continue
            error = broken.to_dict()
        if error.get("code") == "resume.in_doubt":
            # The run cannot resume without the value (`resume.inputs_unread`).
            error = error | {
                "hint": "check the source system; then launch the plan again (no step ran)"
            }
        return spec, {task.step_id: error}
    buffer.run_inputs(run_id, values)
    buffer.write(
        run_id, "launch.run", deferred["record"] | {"inputs": values, "source_reads": reads}
    )
    if not executor.keyed:  # else the first step brings them, or the conclusion
        await executor.flush()  # the run row has every input before a step starts
    return spec | {"inputs": values}, {}


def state_to_dict(state: StepState) -> dict[str, Any]:
    return {
        "done": state.done,
        "failed": state.failed,
        "pending": sorted(state.pending),
        "blocked": sorted(state.blocked),
    }


def state_from_dict(data: Mapping[str, Any]) -> StepState:
    return StepState(
        done=dict(data.get("done", {})),
        failed=dict(data.get("failed", {})),
        pending=set(data.get("pending", [])),
        blocked=set(data.get("blocked", [])),
    )
