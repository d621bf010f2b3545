"""The UI's errors: values with a code, shown on the page or printed by the CLI."""

from __future__ import annotations

from flightdeck._errors import FlightdeckError


class UiError(FlightdeckError):
    # The UI's hint line has been indented from the start, and str() is the
    # message alone; both stay as they were.
    hint_prefix = "  hint: "
    __str__ = Exception.__str__

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(code, message, hint=hint)
