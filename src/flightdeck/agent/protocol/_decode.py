"""One stdin line to one command, or to one problem, at a bounded cost.

`read_command` is the only way a line becomes a command: the line's size and
nesting are checked first (`_limits`), then it is decoded and validated
against the closed command models (msgspec). It never raises.
"""

from __future__ import annotations

from typing import Any

import msgspec

from flightdeck._json import JsonError, read_json
from flightdeck.agent.protocol._limits import MAX_ID_CHARS, MAX_ITEMS, line_problem
from flightdeck.agent.protocol._models import (
    COMMAND_TYPES,
    Command,
    ProtocolProblem,
    wire_type,
)
from flightdeck.agent.protocol._problems import describe, short
from flightdeck.agent.protocol._wire import _Wire

_COMMANDS_BY_TYPE: dict[str, type[_Wire]] = {wire_type(m): m for m in COMMAND_TYPES}


def read_command(line: str | bytes) -> Command | ProtocolProblem:
    """Parse one stdin line. Never raises; its cost is bounded by `_limits`."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    problem = line_problem(raw)
    if problem is not None:
        return ProtocolProblem(problem)
    try:
        # `line_problem` has just measured the nesting against MAX_DEPTH;
        # measuring it again would cost a second pass over every line.
        data = read_json(raw, depth=None)
    except JsonError as exc:
        return ProtocolProblem(f"Malformed JSON: {short(str(exc))}")
    if not isinstance(data, dict):
        return ProtocolProblem("A command must be a JSON object")
    raw_id = data.get("msg_id")
    msg_id = raw_id if isinstance(raw_id, str) and len(raw_id) <= MAX_ID_CHARS else None
    kind = data.get("type")
    if kind is None:
        return ProtocolProblem("Missing field: type", msg_id)
    model = _COMMANDS_BY_TYPE.get(kind) if isinstance(kind, str) else None
    if model is None:
        return ProtocolProblem(f"Unknown command type: {short(str(kind))}", msg_id)
    shape = _shape_problem(data, model)
    if shape is not None:  # found before validation, whose errors cost per item
        return ProtocolProblem(f"Invalid {kind} command: {shape}", msg_id)
    try:
        command: Command = msgspec.convert(data, model)  # type: ignore[assignment]
    except msgspec.ValidationError as exc:
        # Only a refused line pays for naming every problem.
        return ProtocolProblem(f"Invalid {kind} command: {describe(data, model, exc)}", msg_id)
    return command


def _shape_problem(data: dict[str, Any], model: type[_Wire]) -> str | None:
    """Unknown fields, or a list or object with too many items, named without
    building one validation error per key or item."""
    fields = model.__struct_fields__
    unknown = [k for k in data if k not in fields]
    if unknown:
        more = f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""
        return short("; ".join(f"unknown field {k}" for k in unknown[:5])) + more
    for key, value in data.items():
        if isinstance(value, list | dict) and len(value) > MAX_ITEMS:
            return f"{key}: more than {MAX_ITEMS} items"
    return None
