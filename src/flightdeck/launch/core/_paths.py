"""Field paths with `[]` wildcards: `series[].labels.account_id`.

One small grammar serves the input `select` of a source read and the
`field` of a redaction rule: dot-separated keys, where a key followed by
`[]` walks every item of the array it names (a path may also start with
`[]` for a top-level array). `select` collects the values a path reaches
(one value, or a list when the path crosses a wildcard); `rewrite` applies a
function at each place the path reaches, leaving everything else untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flightdeck.launch.core._errors import LaunchError

_SEGMENT = re.compile(r"^([A-Za-z0-9_$@-][A-Za-z0-9_$@.-]*?)?((?:\[\])*)$")


@dataclass(frozen=True)
class Part:
    key: str | None  # None: no key, only wildcards (a path starting with `[]`)
    wildcards: int


DROP = object()  # returned by a rewrite function to delete the field


def parse_path(text: str) -> tuple[Part, ...]:
    """Parse a path; `LaunchError("path.invalid")` on bad syntax."""
    if not text or text.startswith(".") or text.endswith(".") or ".." in text:
        raise LaunchError("path.invalid", f"invalid field path {text!r}")
    parts = []
    for segment in text.split("."):
        match = _SEGMENT.match(segment)
        if match is None or (not match.group(1) and not match.group(2)):
            raise LaunchError("path.invalid", f"invalid field path {text!r} at {segment!r}")
        parts.append(Part(match.group(1) or None, len(match.group(2)) // 2))
    return tuple(parts)


def select(value: Any, text: str) -> Any:
    """The value(s) `text` reaches in `value`. A missing key is an error
    (`path.no_match`) unless it sits under a wildcard, where it is skipped."""
    parts = parse_path(text)
    wild = any(part.wildcards for part in parts)
    found = list(_walk(value, parts, text, strict=not wild))
    if wild:
        return found
    return found[0]


def _walk(value: Any, parts: tuple[Part, ...], text: str, *, strict: bool) -> Any:
    if not parts:
        yield value
        return
    head, rest = parts[0], parts[1:]
    if head.key is not None:
        if not isinstance(value, dict) or head.key not in value:
            if strict:
                raise LaunchError("path.no_match", f"{text!r}: no field {head.key!r}")
            return
        value = value[head.key]
    items = [value]
    for _ in range(head.wildcards):
        items = [item for each in items if isinstance(each, list) for item in each]
    for item in items:
        yield from _walk(item, rest, text, strict=strict)


def rewrite(value: Any, text: str, apply: Callable[[Any], Any]) -> Any:
    """A copy of `value` with `apply` run on every field `text` reaches;
    `apply` returning `DROP` removes the field. Missing fields are ignored."""
    return _rewrite(value, parse_path(text), apply)


def _rewrite(value: Any, parts: tuple[Part, ...], apply: Callable[[Any], Any]) -> Any:
    head, rest = parts[0], parts[1:]
    if head.key is None:
        return _through(value, head.wildcards, rest, apply)
    if not isinstance(value, dict) or head.key not in value:
        return value
    out = dict(value)
    inner = out[head.key]
    if head.wildcards:
        out[head.key] = _through(inner, head.wildcards, rest, apply)
    elif rest:
        out[head.key] = _rewrite(inner, rest, apply)
    else:
        replaced = apply(inner)
        if replaced is DROP:
            del out[head.key]
        else:
            out[head.key] = replaced
    return out


def _through(value: Any, depth: int, rest: tuple[Part, ...], apply: Callable[[Any], Any]) -> Any:
    if not isinstance(value, list):
        return value
    if depth > 1:
        return [_through(item, depth - 1, rest, apply) for item in value]
    if not rest:
        kept = [apply(item) for item in value]
        return [item for item in kept if item is not DROP]
    return [_rewrite(item, rest, apply) for item in value]
