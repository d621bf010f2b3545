"""The validate pipeline: scan, load, schema, kind-specific checks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from flightdeck.documents import (
    Diagnostic,
    Document,
    ScanEntry,
    Severity,
    load_document,
    merge_overlapping,
    scan_paths,
)
from flightdeck.validation._checks import CheckSet, default_checks
from flightdeck.validation._options import ValidateOptions
from flightdeck.validation._report import FileReport, ValidationReport

Progress = Callable[[int, Path], None]


def validate_paths(
    paths: Iterable[str | Path],
    options: ValidateOptions | None = None,
    *,
    checks: CheckSet | None = None,
    progress: Progress | None = None,
) -> ValidationReport:
    """Validate every manifest under `paths`; one bad file never stops the rest."""
    options = options or ValidateOptions()
    checks = checks if checks is not None else default_checks(options)
    files: list[FileReport] = []
    for index, entry in enumerate(scan_paths(paths)):
        if progress is not None:
            progress(index, entry.path)
        files.append(_validate_one(entry, options, checks))
    return ValidationReport(files)


def _validate_one(entry: ScanEntry, options: ValidateOptions, checks: CheckSet) -> FileReport:
    if entry.problem is not None:
        diag = Diagnostic("document.not_found", entry.problem, file=str(entry.path))
        return FileReport(entry.path, None, (diag,))
    result = load_document(entry.path, kind=options.kind, limits=options.limits)
    if result.document is None:
        if not entry.explicit and any(d.code == "document.binary" for d in result.diagnostics):
            note = Diagnostic(
                "document.binary_skipped",
                "skipped: a binary file with a manifest's name",
                severity=Severity.INFO,
                file=str(entry.path),
            )
            return FileReport(entry.path, None, (note,), skipped=True)
        return FileReport(entry.path, None, result.diagnostics)
    extra = _run_checks(result.document, checks.get(result.document.kind, ()))
    diagnostics = merge_overlapping(result.diagnostics, extra)
    return FileReport(entry.path, result.document.kind, diagnostics)


def _run_checks(
    document: Document, kind_checks: Sequence[Callable[[Document], list[Diagnostic]]]
) -> tuple[Diagnostic, ...]:
    found: list[Diagnostic] = []
    for check in kind_checks:
        found.extend(check(document))
    return tuple(found)
