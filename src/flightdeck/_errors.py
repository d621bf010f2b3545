"""The one base of flightdeck's reportable errors.

An error a user sees is a value: a stable `code`, a `message` naming the
file or value at fault, often a `hint`, sometimes where it happened. Each
layer has its own class (`LaunchError`, `FlightPlanError`, `DriverError`,
`UiError`, `AuditStoreError`, `ConfigError`, ...) with the fields it needs;
this base writes every one of them the same two ways, once:

- `describe()`, for a terminal:

      error: HEADING [CODE]
        at WHERE
        DETAIL...
      hint: HINT

  where the heading is the message unless a class adds to it (a launch
  error names its step, a config error its file), `at` appears for an
  error with a `where`, and a class may add detail lines (freeze's lint
  diagnostics);
- `to_dict()`, for `--format json`: the class's `fields`, in that order,
  each as JSON data (`field_value`); a field named in `optional` is left
  out while it is empty.

A class declares its fields and their order and, where it needs to, the
hooks above; it does not write either form itself (tests/test_errors.py
holds every class to that). Like `_bounded`, this module imports nothing
of flightdeck, so every layer may use it.
"""

from __future__ import annotations

from typing import Any, ClassVar


def _empty(value: Any) -> bool:
    # Zero and False are values; only missing text and empty collections are not.
    return value is None or (isinstance(value, str | dict | list | tuple) and not value)


class FlightdeckError(Exception):
    """A refusal or failure with a code, a message, and often a hint."""

    fields: ClassVar[tuple[str, ...]] = ("code", "message", "hint")
    # Fields `to_dict` leaves out while they are empty (None, "", {}, [], ()).
    optional: ClassVar[frozenset[str]] = frozenset()
    # How the hint line starts in `describe`.
    hint_prefix: ClassVar[str] = "hint: "

    code: str
    message: str
    hint: str | None
    # Where it happened, shown as `  at WHERE`; only some errors know it.
    where: str | None = None

    def __init__(self, code: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def heading(self) -> str:
        """The first line's text before `[code]`."""
        return self.message

    def detail_lines(self) -> list[str]:
        """Lines between the place and the hint, without their indent."""
        return []

    def field_value(self, name: str) -> Any:
        """Field `name` as JSON data."""
        return getattr(self, name)

    def describe(self) -> str:
        """Plain text for a terminal: the error, where, details, hint."""
        lines = [f"error: {self.heading()} [{self.code}]"]
        if self.where:
            lines.append(f"  at {self.where}")
        lines.extend(f"  {line}" for line in self.detail_lines())
        if self.hint:
            lines.append(f"{self.hint_prefix}{self.hint}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The fields, in order, as JSON data."""
        out: dict[str, Any] = {}
        for name in self.fields:
            value = self.field_value(name)
            if name in self.optional and _empty(value):
                continue
            out[name] = value
        return out

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


__all__ = ["FlightdeckError"]
