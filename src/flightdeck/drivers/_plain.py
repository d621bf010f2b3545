"""Return values as plain JSON data (what extraction and output schemas see).

SDKs return their own types: pydantic models (`model_dump`), dataclasses,
tuples. They are converted once, after the call; plain dicts, lists and
scalars pass through untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)  # exact types: one set lookup, no isinstance chain


class NotPlain(TypeError):
    """A value with no JSON form; `type_name` says what it was."""

    def __init__(self, type_name: str) -> None:
        super().__init__(f"a {type_name} has no JSON form")
        self.type_name = type_name


def to_plain(value: Any) -> Any:
    # Exact dicts and lists of scalars (most results) without a call per item;
    # subclasses and everything else take the general path below.
    kind = type(value)
    if kind in _SCALAR_TYPES:
        return value
    if kind is dict:
        # A flat dict with text keys (a common result): checked, then copied in C,
        # about half the cost of building the copy item by item.
        for k, v in value.items():
            if type(k) is not str or type(v) not in _SCALAR_TYPES:
                break
        else:
            return value.copy()
        return {
            k if type(k) is str else str(k): v if type(v) in _SCALAR_TYPES else to_plain(v)
            for k, v in value.items()
        }
    if kind is list:
        for v in value:
            if type(v) not in _SCALAR_TYPES:
                break
        else:
            return value.copy()
        return [v if type(v) in _SCALAR_TYPES else to_plain(v) for v in value]
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_plain(dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_plain(dataclasses.asdict(value))
    raise NotPlain(type(value).__name__)
