"""What is wrong with a refused command, in the words the protocol has used.

msgspec stops at a command's first problem and words it its own way; the
agent's `protocol_error` messages name every problem, field by field in
declaration order, in the wording clients have seen since the first release
(pydantic's: "missing field msg_id", "scope: Input should be 'once' or
'always'", "files.1: Input should be a valid string"). This module walks the
model's field types to say so. It runs only for a line msgspec refused, and
msgspec's decision stands: if the walk finds nothing, msgspec's own message is
used. tests/agent/test_command_golden.py pins both against the recorded
decisions of the pydantic reader.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Literal

import msgspec

__all__ = ["describe", "short"]


def describe(data: dict[str, Any], model: type[msgspec.Struct], exc: Exception) -> str:
    """Every problem of a refused command object, or msgspec's message."""
    parts: list[str] = []
    for info in _fields(model):
        if info.encode_name not in data:
            if info.required:
                parts.append(f"missing field {info.encode_name}")
            continue
        parts += _errors(data[info.encode_name], info.type, info.encode_name)
    if not parts:  # the fields are valid: a rule of the whole command failed
        parts.append(str(exc).split(" - at `", 1)[0])
    return short("; ".join(parts))


@functools.cache
def _fields(model: type[msgspec.Struct]) -> tuple[msgspec.structs.FieldInfo, ...]:
    return msgspec.structs.fields(model)  # resolves the type hints: once per model


def short(text: str, limit: int = 500) -> str:
    """Error messages echo parts of the line; keep them a readable size."""
    return text if len(text) <= limit else text[:limit] + "..."


def _errors(value: Any, typ: Any, where: str) -> list[str]:
    metas: list[msgspec.Meta] = []
    while typing.get_origin(typ) is Annotated:
        typ, *extra = typing.get_args(typ)
        metas += [m for m in extra if isinstance(m, msgspec.Meta)]
    if _union(typ):
        options = [t for t in typing.get_args(typ) if t is not type(None)]
        if value is None:
            return []
        typ = options[0] if len(options) == 1 else typ
        return _errors(value, typ, where)
    return [
        f"{where}: {msg}" if isinstance(msg, str) else msg[0]
        for msg in _check(value, typ, metas, where)
    ]


def _union(typ: Any) -> bool:
    return typing.get_origin(typ) in (typing.Union, types.UnionType)


def _check(value: Any, typ: Any, metas: list[msgspec.Meta], where: str) -> list[Any]:
    """Problems as messages (the caller adds `where`), or as 1-tuples already
    located (the items of a list or object)."""
    max_length = next((m.max_length for m in metas if m.max_length is not None), None)
    origin = typing.get_origin(typ)
    if origin is Literal:
        if value in typing.get_args(typ) and isinstance(value, str):
            return []
        return ["Input should be " + _either([repr(a) for a in typing.get_args(typ)])]
    if typ is str:
        if not isinstance(value, str):
            return ["Input should be a valid string"]
        if max_length is not None and len(value) > max_length:
            return [f"String should have at most {max_length} characters"]
        return []
    if typ is int:
        return _int_problems(value, metas)
    if origin is list:
        if not isinstance(value, list):
            return ["Input should be a valid list"]
        if max_length is not None and len(value) > max_length:
            return [
                f"List should have at most {max_length} items after validation, not {len(value)}"
            ]
        (item,) = typing.get_args(typ)
        return [(e,) for i, v in enumerate(value) for e in _errors(v, item, f"{where}.{i}")]
    if origin is dict:
        if not isinstance(value, dict):
            return ["Input should be a valid dictionary"]
        _, item = typing.get_args(typ)
        return [(e,) for k, v in value.items() for e in _errors(v, item, f"{where}.{k}")]
    return []  # Any


def _int_problems(value: Any, metas: list[msgspec.Meta]) -> list[str]:
    # A JSON integer only: pydantic's lax mode also took `true`, `5.0` and
    # "5", which no host sends (docs/decisions.md).
    if isinstance(value, bool) or not isinstance(value, int):
        return ["Input should be a valid integer"]
    for meta in metas:
        if meta.ge is not None and value < meta.ge:
            return [f"Input should be greater than or equal to {meta.ge}"]
    return []


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
