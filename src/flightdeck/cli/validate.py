"""`flightdeck validate PATH...`"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from flightdeck.cli._params import (
    library_option,
    report_format_option,
    strict_option,
    workspace_option,
)
from flightdeck.cli._render import print_diagnostics_by_file, summary_line
from flightdeck.documents import Diagnostic, DocumentKind, Limits, Severity
from flightdeck.validation import FileReport, ValidateOptions, ValidationReport, validate_paths

_KINDS = [k.value for k in DocumentKind]


def _progress_printer() -> Callable[[int, Path], None] | None:
    """A `\\r` counter on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(index: int, path: Path) -> None:
        if index % 250 == 0:
            sys.stderr.write(f"\rvalidating... {index} files")
            sys.stderr.flush()

    return show


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--as", "as_kind", type=click.Choice(_KINDS), help="Treat every file as this kind.")
@report_format_option
@strict_option
@library_option
@workspace_option
@click.option(
    "--catalog",
    "catalog_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Check Flight Plans' environment.tools against this tool catalog file (the one"
    " freeze composes from) instead of the shipped catalog. Default: each plan's"
    " workspace's [catalog] file, if set.",
)
@click.option("-v", "--verbose", is_flag=True, help="Also print info notes (e.g. orphan tools).")
@click.option(
    "--max-bytes", type=click.IntRange(min=1), default=Limits.max_bytes, show_default=True
)
@click.option(
    "--max-depth", type=click.IntRange(min=1), default=Limits.max_depth, show_default=True
)
@click.option(
    "--max-aliases",
    type=click.IntRange(min=0),
    default=Limits.max_alias_expansion,
    show_default=True,
)
def validate(
    paths: tuple[Path, ...],
    as_kind: str | None,
    fmt: str,
    strict: bool,
    libraries: tuple[Path, ...],
    workspace: Path | None,
    catalog_file: Path | None,
    verbose: bool,
    max_bytes: int,
    max_depth: int,
    max_aliases: int,
) -> None:
    """Validate manifests: files, or directories scanned recursively for
    ACTION.md, TOOL.md, DRIVER.md, SKILL.md and *.skill.md.

    Exit status: 0 all valid, 1 some invalid, 2 usage error.

    \b
    Examples:
      flightdeck validate examples/
      flightdeck validate --format json .actions/
      flightdeck validate --as io blocks/shared-io.md
      flightdeck validate --catalog tools.catalog.json plans/
      flightdeck validate --format github .   # annotations in GitHub Actions
    """
    options = ValidateOptions(
        kind=DocumentKind(as_kind) if as_kind else None,
        limits=Limits(max_bytes, max_depth, max_aliases),
        strict=strict,
        libraries=libraries,
        workspace=workspace,
        catalog=catalog_file,
    )
    progress = _progress_printer()
    # What is loaded by now lives as long as the process: the collections a
    # large tree's run sets off need not walk it (~2% of a 10,000-file run).
    gc.freeze()
    report = validate_paths(paths, options, progress=progress)
    if progress is not None:
        sys.stderr.write("\r\033[K")
    if fmt == "json":
        click.echo(report.to_json())
    elif fmt in ("github", "sarif"):
        _print_annotations(report, fmt)
    else:
        _print_text(report, verbose=verbose)
    sys.exit(0 if report.ok else 1)


def _print_text(report: ValidationReport, *, verbose: bool) -> None:
    def shown(file: FileReport) -> tuple[Diagnostic, ...]:
        if verbose or file.skipped:
            return file.diagnostics
        return tuple(d for d in file.diagnostics if d.severity is not Severity.INFO)

    print_diagnostics_by_file((f.path, f.kind, shown(f)) for f in report.files)
    click.echo(summary_line(report.summary()))


def _print_annotations(report: ValidationReport, fmt: str) -> None:
    from flightdeck.cli._annotations import github_lines, sarif_log

    entries = [(f.path, f.diagnostics) for f in report.files]
    if fmt == "github":
        for line in github_lines(entries):
            click.echo(line)
    else:
        click.echo(json.dumps(sarif_log(entries), indent=2))
