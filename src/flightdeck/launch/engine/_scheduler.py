"""Walk the step graph: topological order, ties by declaration order, ready
steps dispatched concurrently up to `max_parallel`.

Each finished step is journaled before any further step is dispatched. A
failed step stops its dependants (recorded as `blocked`) while independent
branches finish; a step waiting for approval is `pending-approval` and so
are its dependants' chances (they stay `blocked`). Completed steps of an
earlier attempt (resume) are memoised, never re-run.
"""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from flightdeck.flightplan import FlightPlan, Step, substitute_inputs
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._task import StepOutcome, StepSettings, StepTask
from flightdeck.launch.engine._approval import PENDING, Approvals
from flightdeck.launch.engine._events import EventSink, LaunchEvent, ignore
from flightdeck.launch.engine._executor import Executor, InlineExecutor

_HOST = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9*.-]*(?::[0-9]+)?$")
# Transforms run in one round's transaction at most: it bounds how long the
# event loop is held (running steps wait meanwhile) and what a kill -9
# before the commit makes a resume redo.
CASCADE_LIMIT = 256


class StepJournal(Protocol):
    """What the scheduler writes: the `Journal`, or (inside a Temporal
    workflow, which may do no I/O) a buffer a worker applies."""

    def batch(self) -> AbstractContextManager[None]: ...

    def step_started(self, run_id: str, step_id: str, kind: str, approval: str | None) -> None: ...

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
    ) -> None: ...


class AuditWriter(Protocol):
    def write(self, run_id: str, kind: str, fields: Mapping[str, Any]) -> None: ...


@dataclass
class StepState:
    """Where each step ended up. `done` maps a completed step to its
    `{"result", "outputs"}`; the other maps give the error or reason."""

    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    blocked: set[str] = field(default_factory=set)


@dataclass
class Scheduler:
    plan: FlightPlan
    run_id: str
    inputs: Mapping[str, Any]
    launch_time: str
    executor: Executor
    journal: StepJournal
    audit: AuditWriter
    approvals: Approvals
    settings: StepSettings
    max_parallel: int = 4
    emit: EventSink = ignore
    replay: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    state: StepState = field(default_factory=StepState)
    # The contract dict each action ref's tasks carry: one per ref and run,
    # so the executor reads each contract once (`steps._action.read_contract`).
    _contracts: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)

    async def run(self) -> StepState:
        graph = self.plan.graph
        try:
            order = graph.topological_order()
        except ValueError:
            raise LaunchError("plan.cycle", "the step graph has a cycle") from None
        steps = {step.id: step for step in self.plan.steps}
        rank = {step_id: index for index, step_id in enumerate(order)}
        settled = set(self.state.done) | set(self.state.failed)  # memoised or in doubt
        waiting = {step_id for step_id in order if step_id not in settled}
        missing = {
            step_id: sum(d not in self.state.done for d in steps[step_id].dependencies())
            for step_id in waiting
        }
        ready = [(rank[s], s) for s in waiting if missing[s] == 0]
        heapq.heapify(ready)

        def settle(step_id: str) -> None:
            # A completed step may make its children ready; anything else
            # blocks every descendant still waiting.
            if step_id in self.state.done:
                for child in graph.successors[step_id]:
                    if child in waiting:
                        missing[child] -= 1
                        if missing[child] == 0:
                            heapq.heappush(ready, (rank[child], child))
                return
            stack = list(graph.successors[step_id])
            while stack:
                child = stack.pop()
                if child in waiting:
                    waiting.discard(child)
                    self._block(steps[child])
                    stack.extend(graph.successors[child])

        for step_id in order:
            if step_id in self.state.failed:
                settle(step_id)
        running: dict[asyncio.Future[StepOutcome], Step] = {}
        # Futures report themselves as they finish: one callback per step,
        # where `asyncio.wait` would add and remove one on every running
        # future in every round.
        finished: list[asyncio.Future[StepOutcome]] = []
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[None] = loop.create_future()

        def report(future: asyncio.Future[StepOutcome]) -> None:
            finished.append(future)
            if not wake.done():
                wake.set_result(None)

        # Steps the executor runs synchronously (a local transform) skip the
        # task machinery. A transform is pure and writes no audit record, so
        # it runs inside the round's transaction, and so do the transforms
        # it makes ready (a cascade): one commit covers the chain. Killed
        # before that commit, a resume re-runs only transforms whose
        # completion was never recorded. Every other step runs only after
        # the commit that holds its `started` row and its inputs' rows: its
        # task first runs when the loop next turns, after the block.
        inline = self.executor if isinstance(self.executor, InlineExecutor) else None
        started_inline: list[tuple[Step, StepTask]] = []
        outcomes: list[tuple[Step, StepOutcome]] = []
        while True:
            # One scheduling round, one journal transaction: the rows of the
            # steps that just finished and of those started now commit
            # together, before any started step other than a transform runs.
            with self.journal.batch():
                # A finished step other than a transform (its completion is
                # what a resume must not lose: it may have had an effect) is
                # committed before any transform runs: no cascade this round.
                cascaded = CASCADE_LIMIT if finished else 0
                outcomes.extend((running.pop(f), f.result()) for f in finished)
                finished.clear()
                while True:
                    outcomes.sort(key=lambda pair: rank[pair[0].id])
                    for step, outcome in outcomes:
                        self._finish(step, outcome)
                        settle(step.id)
                    outcomes.clear()
                    while ready and len(running) + len(started_inline) < max(self.max_parallel, 1):
                        _, step_id = heapq.heappop(ready)
                        if step_id not in waiting:
                            continue  # blocked after it became ready
                        waiting.discard(step_id)
                        task = self._dispatch(steps[step_id])
                        if task is None:
                            settle(step_id)
                        elif inline is not None and inline.runs_inline(task):
                            started_inline.append((steps[step_id], task))
                        else:
                            future = asyncio.ensure_future(self.executor.submit(task))
                            future.add_done_callback(report)
                            running[future] = steps[step_id]
                    if inline is None or not started_inline or cascaded >= CASCADE_LIMIT:
                        break
                    # The same steps in the same order as one round each:
                    # only the commits between them are left out.
                    cascaded += len(started_inline)
                    outcomes.extend((s, inline.run_inline(t)) for s, t in started_inline)
                    started_inline.clear()
            if inline is not None:  # past the limit: their `started` rows are committed now
                outcomes.extend((step, inline.run_inline(task)) for step, task in started_inline)
            started_inline.clear()
            if not running and not outcomes:
                break
            if outcomes:
                await asyncio.sleep(0)  # let running steps move between rounds
            elif not finished:
                await wake
            if wake.done():
                wake = loop.create_future()
        return self.state

    # ------------------------------------------------------------------
    def _block(self, step: Step) -> None:
        self.state.blocked.add(step.id)
        self.journal.step_finished(self.run_id, step.id, step.kind or "?", "blocked")
        self._event("step_finished", step.id, "blocked")

    def _values(self, step: Step) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, binding in step.bindings().items():
            if binding.input is not None:
                values[name] = self.inputs[binding.input]
                continue
            outputs = self.state.done[binding.step or ""]["outputs"]
            if binding.output not in outputs:
                raise LaunchError(
                    "binding.missing_output",
                    f"{binding.text}: step {binding.step} produced no output {binding.output!r}",
                    step=step.id,
                )
            values[name] = outputs[binding.output]
        return values

    def _dispatch(self, step: Step) -> StepTask | None:
        kind = step.kind or "?"
        approval = "not-required"
        contract: dict[str, Any] | None = None
        step_data: dict[str, Any] = dict(step.raw)
        hosts: list[str] | None = None
        try:
            values = self._values(step)
            if kind == "tool":
                step_data, hosts = self._substituted(step)
            if kind == "action-call":
                requirement = self.plan.action(step.action_ref or "")
                if requirement is None or requirement.trust_contract is None:
                    raise LaunchError(
                        "action.undeclared",
                        f"{step.action_ref} is not declared in requires.actions",
                        step=step.id,
                    )
                contract = self._contracts.get(requirement.ref)
                if contract is None:
                    contract = self._contracts[requirement.ref] = dict(
                        requirement.trust_contract.raw
                    )
                approval = self.approvals.decide(
                    step.id, step.action_ref or "", requirement.trust_contract.effect
                )
        except LaunchError as exc:
            self._finish(step, StepOutcome.failed(exc.to_dict()))
            return None
        if approval == PENDING:
            self.state.pending.add(step.id)
            self.journal.step_finished(
                self.run_id, step.id, kind, "pending-approval", approval=PENDING
            )
            self._event("step_finished", step.id, "pending-approval")
            return None
        if approval.startswith("denied"):
            error = LaunchError("approval.denied", f"approval denied ({approval})", step=step.id)
            self._finish(step, StepOutcome.failed(error.to_dict()), approval)
            return None
        self.journal.step_started(self.run_id, step.id, kind, approval)
        self._event("step_started", step.id, "running")
        return StepTask(
            run_id=self.run_id,
            step_id=step.id,
            kind=kind,
            step=step_data,
            values=values,
            launch_time=self.launch_time,
            contract=contract,
            approval=approval,
            step_hosts=hosts,
            replay=self.replay.get(step.id) if kind == "llm-seam" else None,
            prompt_context=self._prompt_context(step) if kind == "llm-seam" else None,
            tool_versions=self._locked_versions() if kind == "tool" else None,
            image=self._locked_image() if kind == "tool" else None,
            settings=self.settings,
        )

    def _substituted(self, step: Step) -> tuple[dict[str, Any], list[str]]:
        """The tool step with `{{ inputs.x }}` replaced in its argv and sealed
        hosts by the resolved values (each already checked against the
        input's constraint). Each token stays inside its one argv element:
        the argv is executed without a shell."""
        data = dict(step.raw)
        command = data.get("command")
        if isinstance(command, list):
            data["command"] = [
                substitute_inputs(part, self.inputs) if isinstance(part, str) else part
                for part in command
            ]
        hosts = [substitute_inputs(host, self.inputs) for host in self._sealed_hosts(step)]
        for host in hosts:
            if not _HOST.match(host):
                raise LaunchError(
                    "tool.invalid_host",
                    f"host {host!r} (after substituting inputs) is not a host name",
                    step=step.id,
                    hint="tighten the input's constraint so it only allows host name parts",
                )
        return data, hosts

    def _prompt_context(self, step: Step) -> dict[str, Any]:
        """`inputs` and `steps` for an llm-seam prompt written in Aileron's
        grammar (`{{ inputs.x }}`, `{{ steps.a.out }}`); bindings are passed
        beside them under their own names, and win on a clash."""
        done = {
            step_id: dict(memo.get("outputs", {}))
            for step_id, memo in self.state.done.items()
            if step_id in step.dependencies()
        }
        return {"inputs": dict(self.inputs), "steps": done}

    def _locked_versions(self) -> dict[str, str]:
        lock = self.plan.lock
        caps = lock.resolved_capability_set if lock is not None else ()
        versions = {cap.name: cap.version for cap in caps}
        # A composed image's tools come from a catalog file the shipped one
        # does not know: their programs, as the lock recorded them, name them.
        for image in lock.resolved_images if lock is not None else ():
            for feature in image.features:
                versions.update(dict.fromkeys(feature.programs, feature.version))
        return versions

    def _locked_image(self) -> str | None:
        # Only a signed lock pins an image; an unsigned plan runs host tools.
        lock = self.plan.lock
        return lock.resolved_images[0].pinned if lock is not None and lock.resolved_images else None

    def _sealed_hosts(self, step: Step) -> tuple[str, ...]:
        # Only the reach sealed into the signed lock counts; the step's own
        # trustContract is what freeze sealed, never re-supplied at launch.
        # An unsigned plan has no lock: its declared contract is all there is.
        lock = self.plan.lock
        if lock is not None:
            return lock.step_trust.get(step.id, ())
        return step.trust_contract.hosts if step.trust_contract is not None else ()

    def _finish(self, step: Step, outcome: StepOutcome, approval: str | None = None) -> None:
        kind = step.kind or "?"
        for record in outcome.audit:
            self.audit.write(self.run_id, record["kind"], record["fields"])
        if outcome.status == "completed":
            memo = {"result": outcome.result, "outputs": outcome.outputs}
            self.journal.step_finished(
                self.run_id, step.id, kind, "completed", attempts=outcome.attempts, result=memo
            )
            self.state.done[step.id] = memo
        else:
            error = outcome.error or {"code": "step.failed", "message": "failed"}
            error = {**error, "step": error.get("step") or step.id}
            self.journal.step_finished(
                self.run_id,
                step.id,
                kind,
                "failed",
                attempts=outcome.attempts,
                error=error,
                approval=approval,
            )
            self.state.failed[step.id] = error
        detail = {"error": outcome.error} if outcome.error else {}
        self._event("step_finished", step.id, outcome.status, detail)

    def _event(
        self, kind: str, step_id: str, status: str, detail: dict[str, Any] | None = None
    ) -> None:
        if self.emit is ignore:  # nobody listens (a library launch): build nothing
            return
        self.emit(LaunchEvent(kind, self.run_id, step_id, status, detail or {}))
