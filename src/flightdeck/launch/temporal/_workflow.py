"""The Temporal workflow of a Flight Plan run: it only walks the frozen graph.

The workflow runs the same `Scheduler` as a local launch, with two
replacements (`_rounds`): its executor turns each `StepTask` into an
activity, and its journal and audit are a buffer of writes that a worker
applies (workflow code may do no I/O), before the steps of a scheduling
round start, so a step's `started` row is on disk before the step runs, as
locally. Nothing here reads a clock, a file or a random source; the plan
arrives as its frontmatter data and is read by the pure `read_plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from flightdeck.flightplan import FlightPlan, read_plan
    from flightdeck.launch.core._errors import LaunchError
    from flightdeck.launch.core._task import StepSettings
    from flightdeck.launch.engine._approval import Approvals
    from flightdeck.launch.engine._scheduler import Scheduler, StepState
    from flightdeck.launch.temporal._rounds import (
        BOOKKEEPING,
        CONCLUDE_ACTIVITY,
        PROBE_ACTIVITY,
        PROBE_WORKFLOW,
        WORKFLOW,
        ActivityExecutor,
        WriteBuffer,
        read_sources,
        state_from_dict,
        state_to_dict,
    )


@workflow.defn(name=WORKFLOW)
class FlightPlanWorkflow:
    """One run. Signals `approve` / `deny` (lists of step ids) decide steps
    left pending approval while the run holds for them."""

    def __init__(self) -> None:
        self.approved: set[str] = set()
        self.denied: set[str] = set()
        self.pending: set[str] = set()
        self.concluded = 0

    @workflow.signal
    def approve(self, steps: list[str]) -> None:
        self.approved.update(steps)

    @workflow.signal
    def deny(self, steps: list[str]) -> None:
        self.denied.update(steps)

    @workflow.query
    def waiting(self) -> list[str]:
        return sorted(self.pending)

    @workflow.run
    async def run(self, spec: dict[str, Any]) -> dict[str, Any]:
        plan = read_plan(spec["plan"], spec["body"])
        buffer = WriteBuffer()
        executor = ActivityExecutor(buffer, spec)
        state = state_from_dict(spec["state"])
        if spec.get("sources"):
            spec, failed = await read_sources(plan, spec, executor, buffer)
            if failed:  # no step runs without its inputs: the run ends here
                state.failed.update(failed)
                return await self._conclude(spec, state, executor)
        approve, decisions = set(spec["approve"]), dict(spec["decisions"])
        while True:
            state = await self._walk(plan, spec, executor, buffer, state, approve, decisions)
            result = await self._conclude(spec, state, executor)
            self.pending = set(state.pending)
            if not state.pending or not spec["hold_for_approval"]:
                return result
            await workflow.wait_condition(
                lambda: bool((self.approved | self.denied) & self.pending)
            )
            approve |= self.approved & self.pending
            decisions |= {step: "deny" for step in self.denied & self.pending}
            self.pending = set()  # walking again: the `waiting` query says so
            state.pending.clear()
            state.blocked.clear()
            buffer.run_status(spec["run_id"], "running")
            buffer.write(spec["run_id"], "launch.resume", {"plan": plan.name, "by": "signal"})

    async def _walk(
        self,
        plan: FlightPlan,
        spec: Mapping[str, Any],
        executor: ActivityExecutor,
        buffer: WriteBuffer,
        state: StepState,
        approve: set[str],
        decisions: dict[str, str],
    ) -> StepState:
        scheduler = Scheduler(
            plan=plan,
            run_id=spec["run_id"],
            inputs=spec["inputs"],
            launch_time=spec["launch_time"],
            executor=executor,
            journal=buffer,
            audit=buffer,
            approvals=Approvals(frozenset(approve), decisions),
            settings=StepSettings(**spec["settings"]),
            max_parallel=int(spec["max_parallel"]),
            replay=spec["replay"],
            state=state,
        )
        try:
            state = await scheduler.run()
        except LaunchError as exc:  # a plan no launch would start; nothing to retry
            raise ApplicationError(exc.message, exc.to_dict(), non_retryable=True) from None
        return state  # its last writes are still buffered: `_conclude` applies them

    async def _conclude(
        self, spec: Mapping[str, Any], state: StepState, executor: ActivityExecutor
    ) -> dict[str, Any]:
        """Materialize the outputs and settle the run, on a worker; the writes
        still buffered are applied first, by the same activity."""
        if not executor.keyed:
            await executor.flush()
        async with executor.lock:
            batch = await executor.carried()
        conclusion = {**spec, "state": state_to_dict(state)}
        self.concluded += 1
        result: dict[str, Any] = await workflow.execute_activity(
            CONCLUDE_ACTIVITY,
            args=[conclusion] if batch is None else [conclusion, batch],
            activity_id=f"{spec['run_id']}/conclude/{self.concluded}",
            task_queue=spec["task_queue"],
            start_to_close_timeout=timedelta(seconds=300),
            # A worker lost mid-conclusion: another concludes after this long.
            heartbeat_timeout=timedelta(seconds=float(spec["heartbeat_timeout"])),
            retry_policy=BOOKKEEPING,
        )
        return result


@workflow.defn(name=PROBE_WORKFLOW)
class CredentialProbeWorkflow:
    """`launch --verify-credentials` on Temporal: the plan's credential
    probes, run by one activity on a worker of the run's task queue, where
    the steps will find their credentials and network reach (the launcher
    may have neither). Returns each probe's result; the launcher decides
    (a failed probe: no run is created). Probes are read-only calls: a
    worker lost mid-probe is replaced by another, up to three tries."""

    @workflow.run
    async def run(self, spec: dict[str, Any]) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = await workflow.execute_activity(
            PROBE_ACTIVITY,
            spec,
            activity_id=f"{spec['run_id']}/verify",
            task_queue=spec["task_queue"],
            start_to_close_timeout=timedelta(seconds=float(spec["step_timeout"])),
            heartbeat_timeout=timedelta(seconds=float(spec["heartbeat_timeout"])),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        return results
