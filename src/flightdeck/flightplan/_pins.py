"""Freeze records the code behind every action ref (issue 12 item 4).

flightplan cannot resolve drivers itself (its layer imports `documents`
only), so the caller passes a `CodeResolver` (launch's `DriverInvoker` is
one) the way it passes the image resolver. Freeze asks it once per action
ref, in plan order (input source reads, then action-call steps), and keeps
one `CodePin` per driver with the union of the tools the plan calls.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from flightdeck.documents import Document, pointer_join
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.model._lock import CodePin
from flightdeck.flightplan.model._models import FlightPlan


@runtime_checkable
class CodeResolver(Protocol):
    """Resolves `aileron:<driver>.<tool>` to the pinned code.

    `pin` returns None when no driver with that id implements the tool; it
    raises `FlightPlanError` (`freeze.code_unpinnable`) when the driver is
    there but its code cannot be digested."""

    @property
    def workspace(self) -> Path: ...

    def pin(self, connector: str, action: str) -> CodePin | None: ...


def action_refs(plan: FlightPlan) -> list[tuple[str, str]]:
    """(ref, JSON pointer) of every action the plan calls, in plan order."""
    refs: list[tuple[str, str]] = []
    for item in plan.inputs:
        if item.resolution.source_action_ref:
            pointer = pointer_join(
                "/aileron/inputs", item.index, "resolution", "source", "actionRef"
            )
            refs.append((item.resolution.source_action_ref, pointer))
    for step in plan.steps:
        if step.kind == "action-call" and step.action_ref:
            refs.append((step.action_ref, pointer_join("/aileron/steps", step.index, "actionRef")))
    return refs


def pin_code(plan: FlightPlan, document: Document, resolver: CodeResolver) -> tuple[CodePin, ...]:
    _refuse_mismatches(plan, document, resolver)
    pins: dict[str, CodePin] = {}
    for ref, pointer in action_refs(plan):
        connector, _, action = ref.removeprefix("aileron:").partition(".")
        pin = resolver.pin(connector, action)
        if pin is None:
            raise FlightPlanError(
                "freeze.driver_not_found",
                f"no driver with id {connector!r} implementing {action!r} for {ref}"
                f" in the workspace {resolver.workspace} or its driver libraries",
                hint="freeze in the workspace whose .drivers/ runs the plan, or pass"
                " --workspace DIR",
                where=_where(document, pointer),
            )
        known = pins.get(pin.driver)
        if known is None:
            pins[pin.driver] = pin
        elif not set(pin.tools) <= set(known.tools):
            pins[pin.driver] = replace(known, tools=tuple(sorted({*known.tools, *pin.tools})))
    return tuple(pins[driver] for driver in sorted(pins))


def _refuse_mismatches(plan: FlightPlan, document: Document, resolver: CodeResolver) -> None:
    """A resolver that can also check steps against their tools (launch's
    `check_plan`) refuses the freeze of a plan launch would fail on: a missing
    driver or tool, a required input not bound, an argument the tool does not
    take. The first error decides; `lint --workspace` lists them all."""
    check = getattr(resolver, "check_plan", None)
    if not callable(check):
        return
    for diag in check(plan):
        if diag.is_error:
            unresolved = diag.code in ("lint.driver_not_found", "lint.tool_not_implemented")
            code = "freeze.driver_not_found" if unresolved else "freeze.step_mismatch"
            raise FlightPlanError(
                code,
                diag.message,
                hint=(diag.hint or "") + "; `flightdeck lint --workspace DIR` lists every one",
                where=_where(document, diag.pointer),
            )


def _where(document: Document, pointer: str) -> str:
    position = document.position(pointer)
    file = str(document.path) if document.path else "<input>"
    return f"{file}:{position[0]}:{position[1]}" if position else file
