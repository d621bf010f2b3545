"""The Flight Plan error: a code, a message, a hint, and where.

`FlightPlanError` is raised by freeze, store, keyring and verify for a
refusal the caller must act on (a lint error, an unresolvable image, a
tampered plan, an untrusted publisher). Its `code` is stable (`freeze.*`,
`store.*`, `keyring.*`, `verify.*`, `keys.*`); `diagnostics` carries the lint
diagnostics when freeze stopped on them.
"""

from __future__ import annotations

from typing import Any

from flightdeck._errors import FlightdeckError
from flightdeck.documents import Diagnostic


class FlightPlanError(FlightdeckError):
    fields = ("code", "message", "hint", "where", "diagnostics")

    def __init__(
        self,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        where: str | None = None,
        diagnostics: tuple[Diagnostic, ...] = (),
    ) -> None:
        super().__init__(code, message, hint=hint)
        self.where = where
        self.diagnostics = diagnostics

    def detail_lines(self) -> list[str]:
        return [f"{diag.location}: {diag.message} [{diag.code}]" for diag in self.diagnostics]

    def field_value(self, name: str) -> Any:
        if name == "diagnostics":
            return [diag.to_dict() for diag in self.diagnostics]
        return super().field_value(name)
