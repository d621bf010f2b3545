"""`flightdeck inspect PATH`: the merged safety view of a tool or an action."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from flightdeck.cli._params import format_option, library_option, strict_option, workspace_option
from flightdeck.cli._render import format_diagnostic
from flightdeck.config import find_workspace
from flightdeck.tools import InspectReport, inspect_manifest


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(value) if value else "-"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_value(v)}" for k, v in value.items())
    return str(value) if value != "" else "-"


def _render(report: InspectReport) -> None:
    title = f"{report.kind} {report.id or '?'}"
    click.echo(click.style(title, bold=True) + click.style(f"  {report.path}", dim=True))
    if report.kind == "tool" and report.ok:
        if report.implements is None:
            click.echo("  implements    - (orphan: implements no action)")
        else:
            imp = report.implements
            click.echo(f"  implements    {imp['id']} {imp['version']}  ({imp['ref']})")
            click.echo(click.style(f"                from {imp['source']}", dim=True))
    for name, value in report.fields.items():
        origin = click.style(f"[{report.origins.get(name, '?')}]", fg="cyan")
        click.echo(f"  {name:<13} {_value(value)}  {origin}")
    for diag in report.diagnostics:
        click.echo(format_diagnostic(diag))


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@library_option
@workspace_option
@strict_option
@format_option
def inspect(
    path: Path, libraries: tuple[Path, ...], workspace: Path | None, strict: bool, fmt: str
) -> None:
    """Show what a TOOL or ACTION may mutate, its risk and approval class, the
    action a tool implements, and where each value came from.

    Exit status: 0 ok, 1 the manifest has errors, 2 usage error.

    \b
    Examples:
      flightdeck inspect .tools/git-push/TOOL.md --library ./libs/standard
      flightdeck inspect --format json .actions/storage-commit
    """
    folder = path.resolve() if path.is_dir() else path.resolve().parent
    root = workspace or find_workspace(folder) or Path.cwd()
    report = inspect_manifest(path, libraries=libraries, workspace=root, strict=strict)
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        _render(report)
    if not report.ok:
        raise SystemExit(1)
