"""Shared terminal rendering: diagnostics, tables, errors.

Colour: NO_COLOR (no-color.org) turns it off even on a terminal, FORCE_COLOR
turns it on even in a pipe; neither, colour only on a terminal. `color_choice`
decides once for click (the root context's `color`) and for rich.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import click

if TYPE_CHECKING:
    # Types only: `fail` serves commands (runs, keys) that never load a
    # document, and importing flightdeck.documents pulls in the schemas.
    from rich.console import Console

    from flightdeck.documents import Diagnostic, DocumentKind

# A pipe gets whole values (a run id, a hash) on one line: rich would
# otherwise wrap or cut them at its default 80 columns.
_PIPE_WIDTH = 10_000


def color_choice(environ: Mapping[str, str] = os.environ) -> bool | None:
    """False for NO_COLOR, True for FORCE_COLOR (NO_COLOR wins), else None:
    colour when writing to a terminal."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return None


def console(stderr: bool = False) -> Console:
    """A rich console that follows `color_choice` like click output does."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    color = color_choice()
    tty = stream.isatty()
    return Console(
        file=stream,
        force_terminal=color,  # None: rich's own terminal detection
        color_system=None if color is False else "auto",
        width=None if tty else _PIPE_WIDTH,
        highlight=False,
    )


_STATUS_STYLES = {
    "completed": "green",
    "failed": "red",
    "interrupted": "red",
    "running": "cyan",
    "pending-approval": "yellow",
}


def print_table(columns: Sequence[str], rows: Iterable[Sequence[str | None]]) -> None:
    """Rows under a bold header; on a terminal, long cells end in an ellipsis
    rather than wrapping. Cells are plain text (no rich markup); a `status`
    column is coloured by its value."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False)
    for name in columns:
        table.add_column(name, no_wrap=True, overflow="ellipsis")
    for row in rows:
        cells = []
        for name, cell in zip(columns, row, strict=True):
            style = _STATUS_STYLES.get(cell or "", "") if name == "status" else ""
            cells.append(Text(cell or "-", style=style))
        table.add_row(*cells)
    console().print(table)


# Keyed by the severity's value: `Severity` is a StrEnum, so it looks up the same.
_COLOURS = {"error": "red", "warning": "yellow", "info": "cyan"}


def format_diagnostic(diag: Diagnostic, here: Path | None = None) -> str:
    """One diagnostic under its file's heading. A diagnostic located in
    another file (an implementor pointing at its invalid ACTION.md) names
    that file, since its line belongs there."""
    where = f"{diag.line}:{diag.column or 1}" if diag.line is not None else "-"
    # The same spelling is the same file: two resolves (a stat per component)
    # only for a diagnostic that names another spelling.
    if (
        here is not None
        and diag.file
        and diag.file != str(here)
        and Path(diag.file).resolve() != here.resolve()
    ):
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
