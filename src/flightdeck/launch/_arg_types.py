"""Does the value a step argument binds have a type the tool's input takes?

A step's args are references, never literals (the schema refuses a literal),
so a type is known only through what a reference names: a plan input with a
declared `type` (launch coerces the value to it), or an output of an
action-call step whose TOOL.md declares that output's type. Anything else
(transform, llm-seam and tool-step outputs, untyped inputs, a tool input
with no `type` or a composite schema) is unknown and never reported.

Only a certain mismatch is an error: the types share no value. `number` and
`integer` overlap (an integral number is an integer), so a plan `number`
bound to a tool `integer` passes; a `string` bound to an `integer` does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flightdeck.documents import Diagnostic, Document, pointer_join
from flightdeck.flightplan import FlightPlan, Step, parse_binding

# The JSON Schema type of a value launch gives a plan input of each type.
_INPUT_TYPES = {
    "string": "string",
    "timestamp": "string",  # an RFC 3339 string
    "number": "number",
    "boolean": "boolean",
    "object": "object",
    "array": "array",
}
_NUMERIC = frozenset({"number", "integer"})


def _types(schema: object) -> frozenset[str] | None:
    """The JSON Schema `type` names a schema allows; None when it says none."""
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str):
        return frozenset({kind})
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return frozenset(kind)
    return None


def _overlap(given: frozenset[str], taken: frozenset[str]) -> bool:
    if given & taken:
        return True
    return bool(given & _NUMERIC) and bool(taken & _NUMERIC)


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _output_types(step: Step, tool: Document, name: str) -> frozenset[str] | None:
    """The type of output `name` of an action-call step, when certain: a
    result splits by key only when every declared output is a key, which
    the tool guarantees for required properties (launch's split_outputs)."""
    outputs = _map(tool.data.get("outputs"))
    properties = _map(outputs.get("properties"))
    required = (
        set(outputs.get("required") or ()) if isinstance(outputs.get("required"), list) else set()
    )
    if all(output in required and output in properties for output in step.outputs):
        return _types(properties.get(name))
    return None


def binding_types(
    plan: FlightPlan, text: str, tools: Mapping[str, Document]
) -> frozenset[str] | None:
    """The JSON Schema types of the value reference `text` names, if known."""
    binding = parse_binding(text)
    if binding is None:
        return None
    if binding.input is not None:
        item = plan.input(binding.input)
        kind = _INPUT_TYPES.get(item.type or "") if item is not None else None
        return frozenset({kind}) if kind else None
    producer = plan.step(binding.step or "")
    tool = tools.get(binding.step or "")
    if producer is None or tool is None or binding.output not in producer.outputs:
        return None
    return _output_types(producer, tool, binding.output or "")


def check_arg_types(
    plan: FlightPlan, step: Step, tool: Document, tools: Mapping[str, Document]
) -> list[Diagnostic]:
    """`lint.arg_type` for each argument of `step` whose bound value cannot
    have a type the tool's input of that name takes."""
    properties = _map(_map(tool.data.get("inputs")).get("properties"))
    found: list[Diagnostic] = []
    for name, text in step.references.items():
        taken = _types(properties.get(name))
        given = binding_types(plan, text, tools)
        if taken is None or given is None or _overlap(given, taken):
            continue
        tool_id = tool.data.get("id")
        found.append(
            Diagnostic(
                "lint.arg_type",
                f"step {step.id}: argument {name!r} binds {text}, a {'/'.join(sorted(given))},"
                f" but tool {tool_id} takes {'/'.join(sorted(taken))} for {name!r}",
                pointer=pointer_join("/aileron/steps", step.index, "args", name),
                hint=f"bind a value of that type, or change the input's declared type"
                f" ({tool.path or tool_id})",
            )
        )
    return found
