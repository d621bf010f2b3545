"""A loaded manifest: its kind, plain-JSON frontmatter, body and positions."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from flightdeck.documents._diagnostics import Diagnostic


class DocumentKind(StrEnum):
    ACTION = "action"
    TOOL = "tool"
    DRIVER = "driver"
    SKILL = "skill"
    IO = "io"
    RUNNER = "runner"


@dataclass(frozen=True)
class SourceMap:
    """JSON pointer -> 1-based (line, column) of the value (or key) in the file.

    `keys` holds the position of each mapping key, `values` of each value;
    a lookup prefers the key, so diagnostics point at the field's name.
    """

    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def position(self, pointer: str) -> tuple[int, int] | None:
        hit = self.keys.get(pointer) or self.values.get(pointer)
        if hit is not None:
            return hit
        # Fall back to the nearest ancestor that has a position.
        while pointer:
            pointer = pointer.rsplit("/", 1)[0]
            hit = self.keys.get(pointer) or self.values.get(pointer)
            if hit is not None:
                return hit
        return None

    def value_position(self, pointer: str) -> tuple[int, int] | None:
        return self.values.get(pointer)


@dataclass(frozen=True)
class Document:
    kind: DocumentKind
    data: dict[str, Any]  # the frontmatter as plain JSON data
    body: str  # the markdown after the closing `---`, LF line endings
    path: Path | None = None
    source_map: SourceMap = field(default_factory=SourceMap)
    body_line: int = 1  # 1-based line of the file where `body` starts

    def position(self, pointer: str) -> tuple[int, int] | None:
        return self.source_map.position(pointer)


@dataclass(frozen=True)
class LoadResult:
    """What loading one file produced. `document` is None when it could not
    be parsed (or its kind could not be told); diagnostics say why."""

    path: Path | None
    document: Document | None
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.document is not None and not any(d.is_error for d in self.diagnostics)
