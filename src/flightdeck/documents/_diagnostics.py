"""Diagnostics: problems found in documents, as values.

A `Diagnostic` is flat and frozen. Checks produce them with a JSON pointer
only; `locate` fills in file, line and column from the document's position
map in one place, so no check needs to know about source positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Protocol


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Diagnostic:
    """One problem. `code` is stable (`yaml.duplicate_key`, `schema.required`, ...)."""

    code: str
    message: str
    severity: Severity = Severity.ERROR
    pointer: str = ""  # RFC 6901 JSON pointer into the frontmatter ("" = the whole document)
    schema_pointer: str | None = None
    file: str | None = None
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    hint: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def location(self) -> str:
        """`file:line:col`, as much of it as is known."""
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "pointer": self.pointer,
            "schema_pointer": self.schema_pointer,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
        }


class PositionLookup(Protocol):
    def position(self, pointer: str) -> tuple[int, int] | None: ...


def locate(
    diagnostics: Iterable[Diagnostic], file: str | None, positions: PositionLookup | None
) -> Iterator[Diagnostic]:
    """Add file and line:col to diagnostics that only carry a pointer."""
    for diag in diagnostics:
        line, column = diag.line, diag.column
        if line is None and positions is not None:
            found = positions.position(diag.pointer)
            if found is not None:
                line, column = found
        yield replace(diag, file=diag.file or file, line=line, column=column)


def merge_overlapping(
    schema: Iterable[Diagnostic], checks: Iterable[Diagnostic]
) -> tuple[Diagnostic, ...]:
    """Schema diagnostics then check diagnostics, one per mistake: a schema
    error at the exact place a later check reports an error is dropped, since
    the check's message names the rule (`flightplan.invalid_binding` says more
    than `schema.pattern` on the same value)."""
    later = list(checks)
    taken = {(d.file, d.pointer) for d in later if d.is_error and d.pointer}
    kept = [
        d
        for d in schema
        if not (d.code.startswith("schema.") and d.is_error and (d.file, d.pointer) in taken)
    ]
    return (*kept, *later)


def pointer_join(base: str, *tokens: str | int) -> str:
    """Append tokens to a JSON pointer, escaping `~` and `/` per RFC 6901."""
    out = base
    for token in tokens:
        out += "/" + str(token).replace("~", "~0").replace("/", "~1")
    return out
