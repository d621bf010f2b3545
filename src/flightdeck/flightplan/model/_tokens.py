"""`{{ inputs.x }}` and `{{ steps.<id>.<output> }}` tokens (Aileron's grammar).

A tool step's argv and its trust contract's hosts may carry `{{ inputs.x }}`
for an input with a `constraint`; launch substitutes the resolved, checked
value into the one argv element or host, never through a shell. An llm-seam
prompt may carry either kind; flightdeck renders prompts with Jinja, where a
bare binding name (`{{ series }}`) is also a token, so `scan` reports those as
`name` tokens and leaves their meaning to the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_NAME = r"[A-Za-z0-9_-]+"
_INPUT = re.compile(rf"^inputs\.({_NAME})$")
_STEP = re.compile(rf"^steps\.({_NAME})\.({_NAME})$")
_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INPUT_TOKEN = re.compile(rf"\{{\{{\s*inputs\.({_NAME})\s*\}}\}}")


@dataclass(frozen=True)
class Token:
    """One `{{ ... }}` in a text. `kind` is input, step, name or malformed."""

    text: str  # as written, braces included
    kind: str
    input: str | None = None
    step: str | None = None
    output: str | None = None
    problem: str | None = None  # for malformed tokens: what is wrong


def scan(text: str) -> Iterator[Token]:
    """Every token in `text`, in order, and every unbalanced brace pair."""
    position = 0
    while True:
        start = text.find("{{", position)
        close = text.find("}}", position)
        if start == -1:
            if close != -1:
                yield Token("}}", "malformed", problem="'}}' without an opening '{{'")
            return
        if close != -1 and close < start:
            yield Token("}}", "malformed", problem="'}}' without an opening '{{'")
        end = text.find("}}", start + 2)
        nested = text.find("{{", start + 2)
        if end == -1 or (nested != -1 and nested < end):
            yield Token(text[start:], "malformed", problem="'{{' without a closing '}}'")
            return
        yield _token(text[start : end + 2], text[start + 2 : end].strip())
        position = end + 2


def _token(written: str, inner: str) -> Token:
    if match := _INPUT.match(inner):
        return Token(written, "input", input=match.group(1))
    if match := _STEP.match(inner):
        return Token(written, "step", step=match.group(1), output=match.group(2))
    if _BARE.match(inner):
        return Token(written, "name")
    problem = "a token is {{ inputs.<name> }} or {{ steps.<id>.<output> }}"
    return Token(written, "malformed", problem=problem)


def string_form(value: Any) -> str:
    """A resolved value as text, the form constraints compare and tokens
    substitute (Aileron: "the resolved value's string form"): strings as they
    are, `true`/`false`, integral numbers without `.0`, JSON otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def substitute_inputs(text: str, values: Mapping[str, Any]) -> str:
    """`text` with each `{{ inputs.x }}` replaced by the string form of the
    resolved value of x."""
    return _INPUT_TOKEN.sub(lambda match: string_form(values[match.group(1)]), text)


def has_tokens(text: str) -> bool:
    return "{{" in text or "}}" in text
