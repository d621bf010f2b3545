"""Lenient readers of frontmatter values: a value of the wrong type reads as
empty (or None), never a crash, so lint can run on data the schema rejected."""

from __future__ import annotations

from typing import Any


def _map(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strs(value: object) -> tuple[str, ...]:
    return tuple(item for item in _list(value) if isinstance(item, str))
