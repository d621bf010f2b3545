"""The driver error tree.

    DriverError                      a driver problem, with a stable `code`
    ├── DriverRegistrationError      the driver was refused at registration
    │   │                            (`diagnostics` holds every problem found)
    │   └── DriverNotRunnable        this host cannot run it (npm/cargo/go, kind: http, ...)
    └── DriverCallError              one call failed: input_invalid, template_error,
                                     driver_call_failed, extract_no_match, output_invalid,
                                     dropped_input_used, tool_not_implemented, egress_denied

Messages never carry secret values: templates name the path that failed, not
what it held, and exceptions raised by the package are scrubbed of every known
secret before they are wrapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from flightdeck._errors import FlightdeckError
from flightdeck.documents import Diagnostic

FUNCTION_REF_UNRESOLVABLE = "function_ref_unresolvable"
VERSION_MISMATCH = "version_mismatch"
TEMPLATE_ERROR = "template_error"
EXTRACT_NO_MATCH = "extract_no_match"
INPUT_INVALID = "input_invalid"
OUTPUT_INVALID = "output_invalid"
DRIVER_CALL_FAILED = "driver_call_failed"
NOT_RUNNABLE = "driver_not_runnable"
EGRESS_DENIED = "egress_denied"
# Importing would read a module file its code pin did not check (or other bytes).
PACKAGE_CODE_UNPINNED = "package_code_unpinned"


class DriverError(FlightdeckError):
    """A driver problem: `code`, `message`, and where (`pointer`, `file:line:col`, `hint`)."""

    # Declared as the base does: DriverRegistrationError adds two fields.
    fields: ClassVar[tuple[str, ...]] = (
        "code",
        "message",
        "pointer",
        "file",
        "line",
        "column",
        "hint",
        "details",
    )
    optional = frozenset({"pointer", "file", "line", "column", "hint", "details"})

    def __init__(
        self,
        code: str,
        message: str,
        *,
        pointer: str = "",
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(code, message, hint=hint)
        self.pointer = pointer
        self.file = file
        self.line = line
        self.column = column
        self.details = dict(details or {})

    def to_diagnostic(self) -> Diagnostic:
        return Diagnostic(
            self.code,
            self.message,
            pointer=self.pointer,
            file=self.file,
            line=self.line,
            column=self.column,
            hint=self.hint,
        )


class DriverCallError(DriverError):
    """One tool call failed; the driver stays registered."""


class DriverRegistrationError(DriverError):
    """The driver was refused. `diagnostics` lists every problem, located when known."""

    fields = (*DriverError.fields, "driver", "diagnostics")

    def __init__(self, diagnostics: Iterable[Diagnostic], *, driver_id: str | None = None) -> None:
        diags = tuple(diagnostics)
        errors = [d for d in diags if d.is_error] or list(diags)
        head = errors[0] if errors else Diagnostic("driver_invalid", "driver refused")
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            head.code,
            head.message + more,
            pointer=head.pointer,
            file=head.file,
            line=head.line,
            column=head.column,
            hint=head.hint,
        )
        self.diagnostics = diags
        self.driver_id = driver_id

    def field_value(self, name: str) -> Any:
        if name == "driver":
            return self.driver_id
        if name == "diagnostics":
            return [d.to_dict() for d in self.diagnostics]
        return super().field_value(name)


class DriverNotRunnable(DriverRegistrationError):
    """A well-formed driver this Python host cannot run (`reason` says why)."""

    @property
    def reason(self) -> str:
        return self.message


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret value found in `text` with `***`."""
    for value in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(value) >= 4:  # never blank out single characters of ordinary text
            text = text.replace(value, "***")
    return text
