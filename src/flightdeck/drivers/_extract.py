"""`result_extract`: RFC 9535 JSONPath over the function's return value.

AIP-31's "JSONPath-lite" forms (`$`, `$.a.b`, `$.a[0].b`, `$[*]`, simple
filters) are a subset. A singular query (no wildcard, slice, filter or
descendant) yields its one value; any other query yields the list of matches.
A query that matches nothing is `extract_no_match`.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jsonpath_rfc9535

from flightdeck.documents import Diagnostic
from flightdeck.drivers._errors import EXTRACT_NO_MATCH, DriverCallError

EXTRACT_INVALID = "extract_invalid"
_VIEW_CHARS = 160
# AIP-31 writes filters as `[?(@.kind=='X')]`; RFC 9535 drops the parentheses.
_LEGACY_FILTER = re.compile(r"\[\?\((.*?)\)\]")
# `$.a.b` with plain ASCII names: the common case, answered by dict lookups
# (the library's node machinery costs ~10 us a call; the lookups well under 1).
_DOTTED = re.compile(r"\$(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


class Extractor:
    """A compiled `result_extract`."""

    __slots__ = ("_keys", "_query", "_singular", "path", "pointer")

    def __init__(self, path: str, pointer: str, query: Any) -> None:
        self.path = path
        self.pointer = pointer
        self._query = query
        self._singular = query is None or bool(query.singular_query())
        # Member names of a dotted path: each selects that key of an object
        # and nothing from anything else (RFC 9535 name selectors).
        self._keys: tuple[str, ...] | None = None
        if query is not None and _DOTTED.fullmatch(path):
            self._keys = tuple(path.split(".")[1:])

    @property
    def singular(self) -> bool:
        return self._singular

    @property
    def identity(self) -> bool:
        return self._query is None

    def matches(self, value: Any) -> list[Any]:
        if self._query is None:
            return [value]
        if self._keys is not None:
            for key in self._keys:
                if not isinstance(value, dict) or key not in value:
                    return []
                value = value[key]
            return [value]
        return [node.value for node in self._query.find(value)]

    def apply(self, value: Any) -> Any:
        keys = self._keys
        if keys is not None:  # `matches` inlined, without its one-item list (~0.15 us)
            found = value
            for key in keys:
                if not isinstance(found, dict) or key not in found:
                    break
                found = found[key]
            else:
                return found
        if self._query is None:
            return value
        found = self.matches(value)
        if not found:
            raise DriverCallError(
                EXTRACT_NO_MATCH,
                f"result_extract {self.path!r} matched nothing in {short_view(value)}",
                pointer=self.pointer,
            )
        return found[0] if self._singular else found


def short_view(value: Any) -> str:
    """A one-line, truncated JSON view of a value for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _VIEW_CHARS else text[: _VIEW_CHARS - 1] + "…"


def compile_extract(path: str | None, pointer: str, diags: list[Diagnostic]) -> Extractor:
    """Compile a path once (at registration); a bad path becomes a diagnostic."""
    if path is None or path.strip() == "$":
        return Extractor("$", pointer, None)
    normalized = _LEGACY_FILTER.sub(lambda m: f"[?{m.group(1)}]", path)
    try:
        query = _compile(normalized)
    except jsonpath_rfc9535.JSONPathError as exc:
        diags.append(
            Diagnostic(
                EXTRACT_INVALID,
                f"result_extract {path!r} is not valid JSONPath: {exc}",
                pointer=pointer,
            )
        )
        return Extractor("$", pointer, None)
    return Extractor(path, pointer, query)


def _compile(path: str) -> Any:
    return _compile_short(path) if len(path) <= 512 else jsonpath_rfc9535.compile(path)


# The same paths recur across drivers (`$.data`, `$.choices[0].message.content`);
# compiling one is ~60 us and its query is not changed by use.
@functools.lru_cache(maxsize=1024)
def _compile_short(path: str) -> Any:
    return jsonpath_rfc9535.compile(path)
