"""The one reader of JSON that flightdeck did not just encode itself.

A store, a journal row, an approvals file, a protocol line, a registry's
manifest, a token answer, a model's tool arguments: every JSON text that
comes from outside the running process is decoded here, within bounds.

- Size: `limit` bytes (or characters, for text), checked before decoding.
- Depth: Python's decoder recurses once per level of arrays and objects, so
  a short text of nested brackets ends in `RecursionError`. With `depth`
  (256 unless a caller says otherwise) the nesting is measured first, at C
  speed (a regular expression blanks the strings, then `bytes` passes count
  the brackets), so the decoder never meets more than `depth` levels. With
  `depth=None` (values flightdeck encoded itself, which its encoder allowed
  up to the interpreter's recursion limit) the decoder's own guard is the
  bound, and its `RecursionError` is caught here; no caller catches it.
- Grammar: the decoder's own, `parse_constant` and `parse_float` passed
  through (the ACP frames note `NaN` and numbers too large for a float).
  Bytes are decoded as `json.loads` decodes them (UTF-8, -16 or -32).

Every failure is one `JsonError` (a `ValueError`) with a `reason` and, for
syntax, the decoder's own message and position; each caller turns it into
its own code (`journal.corrupt`, `approval.file_invalid`, JSON-RPC -32700,
...). `json_copy` is the plain-data copy some layers make of values they
hold; it is here so that no other module decodes JSON
(tests/test_json_reader.py holds that line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

Reason = Literal["too_large", "too_deep", "syntax", "not_utf8"]

# Far below the interpreter's recursion limit, whatever the caller's depth.
DEFAULT_DEPTH = 256

# A JSON string literal, unrolled so the match never backtracks.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Openers become "(" and closers ")"; every other byte is dropped.
_BRACKETS = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class JsonError(ValueError):
    """Why a text is not the JSON asked for."""

    def __init__(
        self, reason: Reason, message: str, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(message)
        self.reason: Reason = reason
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return self.message


def nesting_problem(data: bytes, depth: int) -> str | None:
    """Why `data` nests deeper than `depth` levels (or is plainly unbalanced
    past that point), or None. At most `depth` passes over `data`, each at C
    speed; one count when `data` has too few brackets to nest that deep."""
    if data.count(b"[") + data.count(b"{") <= depth:
        return None  # cannot nest deeper than the brackets it has
    brackets = _STRING.sub(b'""', data).translate(_BRACKETS, _NOT_BRACKETS)
    too_deep = b"(" * (depth + 1)
    # A run of openers deeper than the bound is found at once; otherwise each
    # pass removes the innermost pairs (all of them), which shortens a wide
    # structure quickly and turns a deep one into such a run.
    for _ in range(depth):
        if not brackets:
            return None
        if too_deep in brackets:
            break
        shorter = brackets.replace(b"()", b"")
        if shorter == brackets:
            return "Malformed JSON: unbalanced brackets"  # valid JSON reduces to nothing
        brackets = shorter
    if brackets:
        return f"Nesting too deep: more than {depth} levels of arrays or objects"
    return None


def read_json(
    data: bytes | str,
    *,
    limit: int | None = None,
    depth: int | None = DEFAULT_DEPTH,
    parse_constant: Callable[[str], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
) -> Any:
    """The value of the JSON text `data`, or `JsonError`."""
    if limit is not None and len(data) > limit:
        raise JsonError("too_large", f"larger than {limit:,} bytes")
    if depth is not None:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        problem = nesting_problem(raw, depth)
        if problem is not None:
            too_deep = problem.startswith("Nesting")
            raise JsonError("too_deep" if too_deep else "syntax", problem)
    try:
        return json.loads(data, parse_constant=parse_constant, parse_float=parse_float)
    except json.JSONDecodeError as exc:
        raise JsonError("syntax", str(exc), exc.lineno, exc.colno) from None
    except UnicodeDecodeError as exc:
        raise JsonError("not_utf8", str(exc)) from None
    except ValueError as exc:  # an integer longer than int() converts (4,300 digits)
        raise JsonError("syntax", str(exc)) from None
    except RecursionError as exc:  # depth=None, or a caller already deep in the stack
        raise JsonError("too_deep", f"nested too deep ({exc})") from None


def json_copy(value: Any, default: Any = None) -> Any:
    """`value` as plain JSON data (dicts, lists, str, int, float, bool,
    None): a deep copy through the encoder, `default` for other objects.
    Its encoder and decoder share the interpreter's recursion bound, so what
    one writes the other reads."""
    return json.loads(json.dumps(value, default=default))


__all__ = ["DEFAULT_DEPTH", "JsonError", "json_copy", "nesting_problem", "read_json"]
