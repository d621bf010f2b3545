"""Validating paths: load every manifest, run its kind's checks, report.

This sits above the capability layers: it runs the schema (documents), the
narrowing check (actions) and the Flight Plan lint (flightplan) together.
"""

from flightdeck.validation._options import ValidateOptions
from flightdeck.validation._report import FileReport, ValidationReport
from flightdeck.validation._run import validate_paths

__all__ = ["FileReport", "ValidateOptions", "ValidationReport", "validate_paths"]
