"""Before launch: does every action ref reach a driver and a tool that fit?

`check_actions` finds, for each `aileron:<driver>.<tool>` the plan calls, the
driver launch would use (the `DriverIndex` lookup `DriverInvoker` uses) and
the TOOL.md it binds, and compares the step with that tool's contract: every
required input is given, no argument the tool does not take, no argument
bound to a value whose type the tool's input cannot have (`_arg_types`), and
a step that declares several outputs gets them from properties the tool's
outputs declare (launch splits a result by key). Nothing is imported and
nothing runs. `lint --workspace` and `freeze` report these; launch would
otherwise fail on each of them after recording a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flightdeck.documents import Diagnostic, Document, DocumentKind, load_document, pointer_join
from flightdeck.flightplan import FlightPlan
from flightdeck.launch._arg_types import check_arg_types
from flightdeck.launch._driver_index import DriverIndex


def _tool_document(driver_file: Path, action: str) -> Document | None:
    data = load_document(driver_file, kind=DocumentKind.DRIVER).document
    wanted = {action, action.replace("_", "-")}
    for entry in (data.data if data else {}).get("implements", []):
        ref = entry.get("tool") if isinstance(entry, Mapping) else None
        if not isinstance(ref, str) or not ref.endswith(".md"):
            continue
        tool = load_document(driver_file.parent / ref, kind=DocumentKind.TOOL).document
        if tool is not None and tool.data.get("id") in wanted:
            return tool
    return None


def _object_schema(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _diag(code: str, message: str, pointer: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code, message, pointer=pointer, hint=hint)


def _check_args(
    step_id: str, args: Mapping[str, str], tool: Document, pointer: str
) -> list[Diagnostic]:
    inputs = _object_schema(tool.data.get("inputs"))
    properties = _object_schema(inputs.get("properties"))
    required = [name for name in inputs.get("required", []) if isinstance(name, str)]
    where = f"{tool.path}" if tool.path else str(tool.data.get("id"))
    found: list[Diagnostic] = []
    for name in required:
        if name not in args:
            found.append(
                _diag(
                    "lint.missing_arg",
                    f"step {step_id}: tool {tool.data.get('id')} requires input {name!r}",
                    pointer_join(pointer, "args") if args else pointer,
                    hint=f"bind it under args (inputs of the tool: {where})",
                )
            )
    closed = inputs.get("additionalProperties") is False
    for name in args:
        if closed and name not in properties:
            known = ", ".join(sorted(properties)) or "none"
            found.append(
                _diag(
                    "lint.unknown_arg",
                    f"step {step_id}: tool {tool.data.get('id')} takes no input {name!r}",
                    pointer_join(pointer, "args", name),
                    hint=f"its inputs are: {known} ({where})",
                )
            )
    return found


def _check_outputs(
    step_id: str, outputs: Sequence[str], tool: Document, pointer: str
) -> list[Diagnostic]:
    if len(outputs) < 2:
        return []  # one name takes the whole result
    declared = _object_schema(_object_schema(tool.data.get("outputs")).get("properties"))
    if not declared:
        return []  # an open result: only the run can tell
    return [
        _diag(
            "lint.output_not_provided",
            f"step {step_id}: tool {tool.data.get('id')} declares no output {name!r};"
            " launch splits the result by key",
            pointer_join(pointer, "outputs", index),
            hint=f"its outputs are: {', '.join(sorted(declared))}",
        )
        for index, name in enumerate(outputs)
        if name not in declared
    ]


def check_actions(
    plan: FlightPlan, workspace: Path, libraries: Sequence[Path] = ()
) -> list[Diagnostic]:
    """Diagnostics (JSON pointers into the SKILL.md frontmatter) for every
    action-call step whose driver, tool, args or outputs launch would refuse."""
    invoker = DriverIndex(workspace, libraries)
    found: list[Diagnostic] = []
    tools: dict[str, Document] = {}  # step id -> the TOOL.md it runs
    for step in plan.steps:
        if step.kind != "action-call" or not step.action_ref:
            continue
        pointer = pointer_join("/aileron/steps", step.index)
        ref_pointer = pointer_join(pointer, "actionRef")
        body = step.action_ref.removeprefix("aileron:")
        connector, _, action = body.partition(".")
        if not step.action_ref.startswith("aileron:") or not connector or not action:
            continue  # the plan lint already reports a malformed ref
        driver_file = invoker.driver_file(connector)
        if driver_file is None:
            folders = ", ".join(str(folder) for folder in invoker.folders)
            found.append(
                _diag(
                    "lint.driver_not_found",
                    f"step {step.id}: no driver with id {connector!r} for {step.action_ref}",
                    ref_pointer,
                    hint=f"looked in {folders}; add .drivers/<name>/DRIVER.md with id {connector}",
                )
            )
            continue
        tool = _tool_document(driver_file, action)
        if tool is None:
            found.append(
                _diag(
                    "lint.tool_not_implemented",
                    f"step {step.id}: driver {connector} ({driver_file}) implements no tool"
                    f" {action!r}",
                    ref_pointer,
                    hint="list the TOOL.md under the driver's implements",
                )
            )
            continue
        tools[step.id] = tool
        found += _check_args(step.id, step.references, tool, pointer)
        found += _check_outputs(step.id, step.outputs, tool, pointer)
    # Types last: a step's output type comes from its producer's TOOL.md,
    # which may come later in the list than the step that reads it.
    for step_id, tool in tools.items():
        checked = plan.step(step_id)
        if checked is not None:
            found += check_arg_types(plan, checked, tool, tools)
    return found
