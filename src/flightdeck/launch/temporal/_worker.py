"""A Temporal worker: runs the steps, journal writes and conclusions of runs.

Every activity here does on the worker what the local launch does in the
launcher, with the worker's own `Runtime`: `step` applies the batch of
journal rows and audit records the workflow sent with it (`apply_batch`),
then calls `execute_step` with the worker's services (its invoker, secret
store, provider) and writes each action try's audit record as the try ends;
`apply` writes a batch on its own (a local activity); `conclude` applies
the last batch, materializes the outputs and settles the run's status. The
journal and audit are the stores `runs list|show` read: the PostgreSQL
store every process names, or a data directory the workers share with the
launcher.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from flightdeck.flightplan import read_plan
from flightdeck.launch.core._task import StepTask
from flightdeck.launch.engine._audit import AuditRouter
from flightdeck.launch.engine._conclude import conclude
from flightdeck.launch.engine._executor import execute_step
from flightdeck.launch.engine._probe import run_probes
from flightdeck.launch.engine._runtime import Runtime
from flightdeck.launch.engine._target import VerifiedTarget
from flightdeck.launch.temporal._client import connect
from flightdeck.launch.temporal._rounds import (
    APPLY_ACTIVITY,
    CONCLUDE_ACTIVITY,
    JOURNAL_UNAPPLIED,
    PROBE_ACTIVITY,
    STEP_ACTIVITY,
    state_from_dict,
)
from flightdeck.launch.temporal._workflow import CredentialProbeWorkflow, FlightPlanWorkflow


class StepActivities:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.router = AuditRouter(runtime.audit, runtime.audit_sinks, runtime.journal)

    @activity.defn(name=STEP_ACTIVITY)
    async def step(
        self, data: dict[str, Any], batch: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Run one step; `batch`: the run's writes to apply before it (the
        step does not run unless they are applied)."""
        task = StepTask.from_dict(data)
        beat = asyncio.ensure_future(_heartbeat())
        try:
            try:
                apply_batch(self.runtime, self.router, batch, again=activity.info().attempt > 1)
            except Exception as exc:  # the workflow applies it on its own, then sends the step
                raise ApplicationError(
                    f"the run's writes could not be applied: {exc}",
                    type=JOURNAL_UNAPPLIED,
                    non_retryable=True,
                ) from exc
            outcome = await execute_step(task, self.runtime.services, self.router.write)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        return outcome.to_dict()

    @activity.defn(name=PROBE_ACTIVITY)
    async def probe(self, spec: dict[str, Any]) -> list[dict[str, Any]]:
        """The plan's credential probes with this worker's secrets and reach,
        each audited as it ends (`launch.credential_probe`)."""
        plan = read_plan(spec["plan"], spec["body"])
        beat = asyncio.ensure_future(_heartbeat())
        try:
            results = await run_probes(plan, self.runtime.services, self.router, spec["run_id"])
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        return [result.to_dict() for result in results]

    @activity.defn(name=APPLY_ACTIVITY)
    async def apply(self, batch: Any) -> None:
        if isinstance(batch, list):  # a history from before batches had keys
            apply_ops(self.runtime, self.router, batch)
            return
        # A local activity's attempts restart when its workflow task is
        # retried elsewhere: whether it already committed is always asked.
        apply_batch(self.runtime, self.router, batch, again=True)

    @activity.defn(name=CONCLUDE_ACTIVITY)
    async def conclude(
        self, spec: dict[str, Any], batch: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Apply the last batch, materialize the outputs, settle the run. It
        heartbeats like a step (a worker lost mid-conclusion is noticed in
        the heartbeat timeout, not the activity's 300 s), so the work runs
        in a thread while the event loop sends the beats."""
        again = activity.info().attempt > 1
        beat = asyncio.ensure_future(_heartbeat())
        try:
            return await asyncio.to_thread(self._conclude, spec, batch, again)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    def _conclude(
        self, spec: dict[str, Any], batch: dict[str, Any] | None, again: bool
    ) -> dict[str, Any]:
        apply_batch(self.runtime, self.router, batch, again=again)
        verified = VerifiedTarget(
            read_plan(spec["plan"], spec["body"]),
            Path(spec["path"]),
            spec["content_hash"],
            spec.get("version"),
            spec.get("publisher"),
            spec.get("signer"),
            bool(spec.get("unsigned")),
        )
        result = conclude(
            verified,
            spec["run_id"],
            state_from_dict(spec["state"]),
            Path(spec["out_dir"]),
            self.runtime.journal,
            self.runtime.audit,
            self.router,
        )
        return result.to_dict()


async def _heartbeat() -> None:
    # The server notices a dead worker when heartbeats stop; beat three
    # times per timeout so one late beat does not count as a loss.
    timeout = activity.info().heartbeat_timeout
    every = timeout.total_seconds() / 3 if timeout else 10.0
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)


def apply_batch(
    runtime: Runtime, router: AuditRouter, batch: Mapping[str, Any] | None, *, again: bool
) -> None:
    """Apply a keyed batch of the workflow's writes once: its key is the
    first write of its transaction, and when it may have been applied before
    (`again`: a retried attempt) the key is looked up first. An attempt that
    finds the key taken (another attempt applied the batch meanwhile, or is
    applying it: a stalled attempt that Temporal timed out and retried) is
    rolled back whole, and counts as applied once the key is there."""
    if not batch:
        return
    journal = runtime.journal
    run_id, key = batch["run_id"], batch["key"]
    if again and journal.round_applied(run_id, key):
        return
    try:
        apply_ops(runtime, router, batch["ops"], key=(run_id, key))
    except Exception:
        if journal.round_applied(run_id, key):
            return
        raise


def apply_ops(
    runtime: Runtime,
    router: AuditRouter,
    ops: Sequence[Mapping[str, Any]],
    *,
    key: tuple[str, str] | None = None,
) -> None:
    """Write the workflow's buffered journal rows and audit records, in order,
    in one transaction (with a PostgreSQL store, one pipeline: the audit
    records join the journal's round when they go to its database,
    `AuditRouter._joined`), with the batch's `key` when it has one."""
    journal = runtime.journal
    with journal.batch():
        if key is not None:  # first: a second application fails before any write
            journal.mark_round(*key)
        for op in ops:
            name, run_id = op["op"], op["run_id"]
            if name == "step_started":
                journal.step_started(run_id, op["step_id"], op["kind"], op["approval"])
            elif name == "step_finished":
                journal.step_finished(
                    run_id,
                    op["step_id"],
                    op["kind"],
                    op["status"],
                    attempts=op["attempts"],
                    result=op["result"],
                    error=op["error"],
                    approval=op["approval"],
                )
            elif name == "run_inputs":  # its source inputs, read on a worker
                journal.set_run_inputs(run_id, op["inputs"])
            elif name == "run_status":
                journal.set_run_status(run_id, op["status"])
            elif name == "audit":
                router.write(run_id, op["kind"], op["fields"])


async def run_worker(
    address: str,
    task_queue: str,
    runtime: Runtime,
    *,
    namespace: str = "default",
    max_concurrent_steps: int = 16,
    ready: asyncio.Event | None = None,
    sticky_timeout: timedelta = timedelta(seconds=10),
    heartbeat_every: timedelta = timedelta(seconds=5),
) -> None:
    """Serve `task_queue` until cancelled: the run workflows and their steps.
    `sticky_timeout` (`[temporal] sticky_timeout`, `worker --sticky-timeout`):
    how long a run's next workflow task waits on this worker's sticky queue
    (this worker holds the run's state cached) before any worker takes it.
    It is the pause a run can take on top of the heartbeat timeout when
    this worker dies: the server queues the task there as long as it heard
    from the worker in the last 10 seconds (a rule of the Temporal server,
    not configurable), then waits up to this long (docs/launch.md,
    "Executors"). `heartbeat_every`: the most time between two heartbeats
    reaching the server. The SDK otherwise sends one per 80% of the heartbeat
    timeout, which leaves a loaded worker a fifth of the timeout before a
    live step counts as lost."""
    client = await connect(address, namespace)
    activities = StepActivities(runtime)
    worker = Worker(
        client,
        task_queue=task_queue,
        workflows=[FlightPlanWorkflow, CredentialProbeWorkflow],
        activities=[activities.step, activities.apply, activities.conclude, activities.probe],
        max_concurrent_activities=max_concurrent_steps,
        sticky_queue_schedule_to_start_timeout=sticky_timeout,
        max_heartbeat_throttle_interval=heartbeat_every,
    )
    async with worker:
        if ready is not None:
            ready.set()
        await asyncio.Event().wait()  # until cancelled (Ctrl-C, SIGTERM)
