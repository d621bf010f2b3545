"""The UI's errors: values with a code, shown on the page or printed by the CLI."""

from __future__ import annotations

from typing import Any


class UiError(Exception):
    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def describe(self) -> str:
        text = f"error: {self.message} [{self.code}]"
        return text + (f"\n  hint: {self.hint}" if self.hint else "")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}
