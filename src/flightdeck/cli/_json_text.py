"""`json.dumps(value, indent=2)`, twice as fast for plain JSON values.

With `indent`, the standard library encodes in pure Python through nested
generators (~0.1 s for a 10,000-file validate report, 4 MB of text). This
writer appends to one list, with the C string encoder for strings; anything
but str, int, bool, None, and lists and dicts of them (a float, a tuple, a
subclass, a non-string key) goes to `json.dumps` itself, so the text is the
same in every case."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

__all__ = ["dumps_indented"]


class _Unplain(Exception):
    """A value this writer leaves to `json.dumps`."""


def dumps_indented(value: Any) -> str:
    """Exactly `json.dumps(value, indent=2)`."""
    out: list[str] = []
    try:
        _write(value, "\n", out)
    except (_Unplain, RecursionError):  # json.dumps says what it says about a cycle
        return json.dumps(value, indent=2)
    return "".join(out)


def _write(value: Any, newline: str, out: list[str]) -> None:
    # `type(...) is` rather than isinstance: a str or int subclass (an enum)
    # may encode differently, so it is not plain here. Depth is bounded by
    # the caller's data (a report: four levels).
    kind = type(value)
    if kind is str:
        out.append(encode_basestring_ascii(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        separator = "{" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _Unplain
            out.append(separator + encode_basestring_ascii(key) + ": ")
            separator = "," + inner
            _write(item, inner, out)
        out.append(newline + "}")
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            separator = "," + inner
            _write(item, inner, out)
        out.append(newline + "]")
    else:
        raise _Unplain
