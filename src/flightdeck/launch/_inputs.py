"""Resolve a plan's inputs once, at the launch boundary (seed 003).

`literal` values come from the caller (CLI `--input k=v` strings are typed
per the input's `type`), else the declared `default`, else a prompt on a
terminal, else an error naming every missing input. `dynamic` `now` and
`today` come from ONE clock read. `source` inputs are read by one action
call each (through the same trust-contract machinery as an action-call
step), narrowed with `select`. The result is one resolved-input set: two
steps reading the same input see the same value.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from flightdeck._json import read_json
from flightdeck.flightplan import FlightPlan, Input
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._sources import source_read

Prompt = Callable[[Input], str | None]
SourceReader = Callable[[Input], Awaitable[Any]]


@dataclass(frozen=True)
class ResolvedInputs:
    values: dict[str, Any]
    launch_time: str  # RFC 3339 UTC of the one clock read
    source_reads: list[dict[str, Any]] = field(default_factory=list)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def coerce(item: Input, raw: Any) -> Any:
    """Type a value per the input's `type`. Strings (from a command line)
    are parsed; already-typed values are checked."""
    kind = item.type or "string"
    try:
        return _COERCE[kind](raw)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        shown = repr(raw) if len(repr(raw)) <= 80 else repr(raw)[:79] + "…"
        reason = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise LaunchError(
            "input.invalid",
            f"input {item.name!r} expects a {kind}, got {shown}: {reason}",
            hint=f"--input {item.name}=<{kind}>",
        ) from None


# Inputs are recorded as canonical JSON (RFC 8785), whose numbers are IEEE
# doubles: an integer beyond 2^53 - 1 would not survive the record exactly.
_MAX_SAFE_INTEGER = 2**53 - 1


def _number(raw: Any) -> int | float:
    if isinstance(raw, bool):
        raise TypeError("not a number")
    if isinstance(raw, (int, float)):
        value: int | float = raw
    else:
        text = str(raw).strip()
        try:
            value = int(text)
        except ValueError:
            value = float(text)
    if isinstance(value, int) and abs(value) > _MAX_SAFE_INTEGER:
        raise ValueError(f"integers must be within +/-{_MAX_SAFE_INTEGER}")
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("not a finite number")
    return value


def _boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError("use true or false")


def _timestamp(raw: Any) -> str:
    text = str(raw).strip()
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError("an RFC 3339 timestamp needs a time zone (e.g. Z)")
    return text


def _json_of(kind: type) -> Callable[[Any], Any]:
    def parse(raw: Any) -> Any:
        value = read_json(raw) if isinstance(raw, str) else raw
        if not isinstance(value, kind):
            raise TypeError(f"not a JSON {kind.__name__}")
        return value

    return parse


_COERCE: dict[str, Callable[[Any], Any]] = {
    "string": lambda raw: raw if isinstance(raw, str) else json.dumps(raw),
    "number": _number,
    "boolean": _boolean,
    "timestamp": _timestamp,
    "object": _json_of(dict),
    "array": _json_of(list),
}


async def resolve_inputs(
    plan: FlightPlan,
    given: Mapping[str, Any],
    *,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    prompt: Prompt | None = None,
    read_source: SourceReader | None = None,
    defer_sources: bool = False,
) -> ResolvedInputs:
    """Resolve every declared input. Raises `LaunchError` naming all bad or
    missing inputs at once. `defer_sources`: leave `source` inputs out (a
    Temporal run reads them on a worker, `temporal._rounds`)."""
    declared = {item.name for item in plan.inputs}
    unknown = sorted(set(given) - declared)
    if unknown:
        raise LaunchError(
            "input.unknown",
            f"unknown input(s): {', '.join(unknown)}",
            hint="declared: " + (", ".join(sorted(declared)) or "none"),
        )
    fixed = sorted(
        item.name
        for item in plan.inputs
        if item.name in given and item.resolution.rule != "literal"
    )
    if fixed:
        raise LaunchError(
            "input.not_literal",
            f"input(s) {', '.join(fixed)} are resolved at launch (dynamic or source), not passed",
        )
    moment = clock()  # the one clock read every dynamic input shares
    launch_time = rfc3339(moment)
    values: dict[str, Any] = {}
    missing: list[str] = []
    reads: list[dict[str, Any]] = []
    for item in plan.inputs:
        rule = item.resolution.rule
        if rule == "dynamic":
            values[item.name] = launch_time if item.resolution.value == "now" else launch_time[:10]
        elif rule == "source" and defer_sources:
            continue
        elif rule == "source":
            values[item.name], read = await _read(item, read_source)
            reads.append(read)
        elif item.name in given:
            values[item.name] = coerce(item, given[item.name])
        elif item.resolution.has_default:
            values[item.name] = coerce(item, item.resolution.default)
        elif prompt is not None and (answer := prompt(item)) is not None:
            values[item.name] = coerce(item, answer)
        else:
            missing.append(item.name)
    if missing:
        raise LaunchError(
            "input.missing",
            f"missing input(s): {', '.join(missing)}",
            hint=" ".join(f"--input {name}=..." for name in missing),
        )
    # Checked before any step runs: a constrained value may be substituted
    # into a tool step's argv or hosts, so a bad one must never get that far.
    broken = [
        f"{item.name}: {why}"
        for item in plan.inputs
        if item.name in values and (why := item.violation(values[item.name])) is not None
    ]
    if broken:
        raise LaunchError(
            "input.constraint",
            "input(s) break their constraint: " + "; ".join(broken),
            hint="pass a value the input's constraint (enum or pattern) allows",
        )
    return ResolvedInputs(values, launch_time, reads)


async def _read(item: Input, read_source: SourceReader | None) -> tuple[Any, dict[str, Any]]:
    ref = item.resolution.source_action_ref
    if read_source is None or ref is None:
        raise LaunchError("input.source_unavailable", f"input {item.name!r} has no source reader")
    result = await read_source(item)
    return source_read(item.name, ref, item.resolution.source_select, result)
