"""Shared terminal rendering of diagnostics (colour only on a terminal)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import click

if TYPE_CHECKING:
    # Types only: `fail` serves commands (runs, keys) that never load a
    # document, and importing flightdeck.documents pulls in the schemas.
    from flightdeck.documents import Diagnostic, DocumentKind

# Keyed by the severity's value: `Severity` is a StrEnum, so it looks up the same.
_COLOURS = {"error": "red", "warning": "yellow", "info": "cyan"}


def format_diagnostic(diag: Diagnostic, here: Path | None = None) -> str:
    """One diagnostic under its file's heading. A diagnostic located in
    another file (an implementor pointing at its invalid ACTION.md) names
    that file, since its line belongs there."""
    where = f"{diag.line}:{diag.column or 1}" if diag.line is not None else "-"
    if here is not None and diag.file and Path(diag.file).resolve() != here.resolve():
        where = f"{diag.file}:{where}" if diag.line is not None else diag.file
    sev = click.style(f"{diag.severity.value:<7}", fg=_COLOURS[diag.severity], bold=True)
    pointer = click.style(f"  [{diag.pointer}]", dim=True) if diag.pointer else ""
    text = f"  {where:>7}  {sev} {diag.message}{pointer}  " + click.style(diag.code, dim=True)
    if diag.hint:
        text += "\n" + " " * 18 + click.style(f"hint: {diag.hint}", fg="green")
    return text


def print_diagnostics_by_file(
    files: Iterable[tuple[Path, DocumentKind | None, Sequence[Diagnostic]]],
) -> None:
    for path, kind, diagnostics in files:
        if not diagnostics:
            continue
        label = f" ({kind.value})" if kind else ""
        click.echo(click.style(str(path), bold=True) + label)
        for diag in diagnostics:
            click.echo(format_diagnostic(diag, path))


def summary_line(summary: dict[str, int]) -> str:
    files, invalid = summary["files"], summary["invalid"]
    if files == 0:  # a wrong folder must not look like a clean one
        names = "ACTION.md, TOOL.md, DRIVER.md, SKILL.md or *.skill.md"
        return click.style(f"no manifests found (looked for {names})", fg="yellow", bold=True)
    parts = [f"{summary['errors']} error(s)", f"{summary['warnings']} warning(s)"]
    if summary.get("skipped"):
        parts.append(f"{summary['skipped']} skipped")
    detail = ", ".join(parts)
    if invalid:
        return click.style(f"✗ {invalid} of {files} file(s) invalid: {detail}", fg="red", bold=True)
    return click.style(f"✓ {files} file(s) valid: {detail}", fg="green", bold=True)


class Reportable(Protocol):
    """A typed library error: `describe()` for people, `to_dict()` for JSON."""

    def describe(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


def fail(error: Reportable, fmt: str, status: int = 1) -> NoReturn:
    """Print a library error the way every command does (`error: ... [code]`
    on stderr, or `{"ok": false, "error": {...}}` on stdout) and exit."""
    if fmt == "json":
        click.echo(json.dumps({"ok": False, "error": error.to_dict()}, indent=2))
    else:
        click.echo(error.describe(), err=True)
    raise SystemExit(status)
