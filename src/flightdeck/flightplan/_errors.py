"""The Flight Plan error: a code, a message, a hint, and where.

`FlightPlanError` is raised by freeze, store, keyring and verify for a
refusal the caller must act on (a lint error, an unresolvable image, a
tampered plan, an untrusted publisher). Its `code` is stable (`freeze.*`,
`store.*`, `keyring.*`, `verify.*`, `keys.*`); `diagnostics` carries the lint
diagnostics when freeze stopped on them.
"""

from __future__ import annotations

from typing import Any

from flightdeck.documents import Diagnostic


class FlightPlanError(Exception):
    def __init__(
        self,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        where: str | None = None,
        diagnostics: tuple[Diagnostic, ...] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.where = where
        self.diagnostics = diagnostics

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "where": self.where,
            "diagnostics": [diag.to_dict() for diag in self.diagnostics],
        }

    def describe(self) -> str:
        """Plain multi-line text for a terminal: the error, where, hint, diagnostics."""
        lines = [f"error: {self.message} [{self.code}]"]
        if self.where:
            lines.append(f"  at {self.where}")
        lines.extend(
            f"  {diag.location}: {diag.message} [{diag.code}]" for diag in self.diagnostics
        )
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
