"""The executor interface and the local asyncio executor.

The scheduler hands an `Executor` one `StepTask` at a time and awaits its
`StepOutcome`; both are plain data. `LocalExecutor` runs steps in this
process on the running event loop (concurrency is bounded by the scheduler's
`--max-parallel`). A distributed executor ships `task.to_dict()` to a worker
that builds its own `StepServices` and calls `execute_step` there.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.core._task import StepOutcome, StepTask
from flightdeck.launch.sandbox._tool_step import run_tool
from flightdeck.launch.steps._action import TryRecorder, run_action
from flightdeck.launch.steps._seam import run_seam
from flightdeck.launch.steps._transform_step import run_transform


@runtime_checkable
class Executor(Protocol):
    async def submit(self, task: StepTask) -> StepOutcome: ...


@runtime_checkable
class InlineExecutor(Executor, Protocol):
    """An executor that can run some steps synchronously in the caller's
    thread (the scheduler then needs no task for them)."""

    def runs_inline(self, task: StepTask) -> bool: ...

    def run_inline(self, task: StepTask) -> StepOutcome: ...


async def execute_step(
    task: StepTask, services: StepServices, record: TryRecorder | None = None
) -> StepOutcome:
    """Run one step of any kind. Never raises for a step's own failure. With
    `record`, an action call writes each try's audit record as the try ends
    (a worker passes its own sink); otherwise they come back in the outcome."""
    if task.kind == "transform":
        return run_transform(task, services)
    if task.kind == "action-call":
        return await run_action(task, services, record)
    if task.kind == "llm-seam":
        return await run_seam(task, services)
    if task.kind == "tool":
        return await run_tool(task, services)
    error = LaunchError("step.unknown_kind", f"unknown step kind {task.kind!r}", step=task.step_id)
    return StepOutcome.failed(error.to_dict())


class LocalExecutor:
    """Runs each step in this process, on the caller's event loop. `record`
    (the launch passes its audit router) receives each try's record as the
    try ends."""

    def __init__(self, services: StepServices, record: TryRecorder | None = None) -> None:
        self.services = services
        self.record = record

    async def submit(self, task: StepTask) -> StepOutcome:
        return await execute_step(task, self.services, self.record)

    def runs_inline(self, task: StepTask) -> bool:
        # A transform is synchronous, pure and writes no audit record. A
        # subclass that overrides `submit` sees every task, transforms too.
        return task.kind == "transform" and type(self).submit is LocalExecutor.submit

    def run_inline(self, task: StepTask) -> StepOutcome:
        return run_transform(task, self.services)
