"""Which checks beyond the schema run for each document kind.

The higher layers own their checks; this is the one place that wires them
into `validate`. A check takes a loaded document and returns located
diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from flightdeck.documents import Diagnostic, Document, DocumentKind

if TYPE_CHECKING:
    from flightdeck.validation._run import ValidateOptions

Check = Callable[[Document], list[Diagnostic]]
CheckSet = Mapping[DocumentKind, Sequence[Check]]


def default_checks(options: ValidateOptions) -> CheckSet:
    """Schema-only until the capability layers register their checks below."""
    checks: dict[DocumentKind, list[Check]] = {}
    return checks
