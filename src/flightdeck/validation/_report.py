"""The result of a validate run, in the shape `--format json` prints."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.documents import Diagnostic, DocumentKind, Severity


@dataclass(frozen=True)
class FileReport:
    path: Path
    kind: DocumentKind | None
    diagnostics: tuple[Diagnostic, ...] = ()
    skipped: bool = False  # e.g. a binary file met during a directory scan

    @property
    def valid(self) -> bool:
        return not self.skipped and not any(d.is_error for d in self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "kind": self.kind.value if self.kind else None,
            "valid": self.valid,
            "skipped": self.skipped,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


@dataclass(frozen=True)
class ValidationReport:
    files: list[FileReport] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.files for d in f.diagnostics if d.severity is severity)

    @property
    def ok(self) -> bool:
        return all(f.valid or f.skipped for f in self.files)

    def summary(self) -> dict[str, int]:
        checked = [f for f in self.files if not f.skipped]
        return {
            "files": len(checked),
            "valid": sum(1 for f in checked if f.valid),
            "invalid": sum(1 for f in checked if not f.valid),
            "skipped": len(self.files) - len(checked),
            "errors": self.count(Severity.ERROR),
            "warnings": self.count(Severity.WARNING),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "summary": self.summary(),
            "files": [f.to_dict() for f in self.files],
        }

    def to_json(self) -> str:
        """The text of `json.dumps(self.to_dict(), indent=2)`, which `--format
        json` prints. Given an indent, json encodes in Python, a generator step
        per token (~0.1 s of a 10,000-file run); msgspec writes the same text
        ~10x faster whenever it is plain ASCII without DEL, and json.dumps
        writes the rest (msgspec leaves non-ASCII and DEL unescaped and
        refuses a lone surrogate, from a path that is not UTF-8)."""
        import msgspec  # only for this format

        data = self.to_dict()
        try:
            text = msgspec.json.format(msgspec.json.encode(data), indent=2).decode("ascii")
        except UnicodeError:
            return json.dumps(data, indent=2)
        return text if "\x7f" not in text else json.dumps(data, indent=2)
