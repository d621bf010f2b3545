"""`flightdeck inspect PATH`: the merged safety view of a tool, an action or a driver."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from flightdeck.cli._params import format_option, library_option, strict_option, workspace_option
from flightdeck.cli._render import format_diagnostic
from flightdeck.config import find_workspace
from flightdeck.documents import DocumentKind, load_document
from flightdeck.drivers import DriverInspectReport, inspect_driver
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
    _render_view(report.fields, report.origins, "  ")
    for diag in report.diagnostics:
        click.echo(format_diagnostic(diag))


def _render_view(fields: dict[str, Any], origins: dict[str, str], indent: str) -> None:
    for name, value in fields.items():
        origin = click.style(f"[{origins.get(name, '?')}]", fg="cyan")
        click.echo(f"{indent}{name:<13} {_value(value)}  {origin}")


def _render_driver(report: DriverInspectReport) -> None:
    title = f"driver {report.id or '?'}"
    click.echo(click.style(title, bold=True) + click.style(f"  {report.path}", dim=True))
    for name, value in report.identity.items():
        if name != "id":
            click.echo(f"  {name:<15} {_value(value if value is not None else '')}")
    for entry in report.entries:
        click.echo(f"  implements[{entry.index}]  {entry.tool_id or '?'}  ({entry.tool_ref})")
        if entry.tool_file:
            click.echo(click.style(f"    file          {entry.tool_file}", dim=True))
        act = entry.action
        action = f"{act['id']} {act['version']}" if act else "- (orphan tool)"
        click.echo(f"    action        {action}")
        _render_view(entry.fields, entry.origins, "    ")
        for name, value in entry.binding.items():
            shown = ("yes" if value else "no") if isinstance(value, bool) else value or ""
            click.echo(f"    {'sdk.' + name:<18} {_value(shown)}")
    for diag in report.diagnostics:
        click.echo(format_diagnostic(diag))


def _is_driver(path: Path) -> bool:
    if path.is_dir():
        return (path / "DRIVER.md").is_file()
    loaded = load_document(path)
    return loaded.document is not None and loaded.document.kind is DocumentKind.DRIVER


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
    action a tool implements, and where each value came from. For a DRIVER.md:
    its identity and, per implements[] entry, the bound tool, its action, the
    entry's merged view and the SDK binding (the package is never imported).

    Exit status: 0 ok, 1 the manifest has errors, 2 usage error.

    \b
    Examples:
      flightdeck inspect .tools/git-push/TOOL.md --library ./libs/standard
      flightdeck inspect --format json .actions/storage-commit
      flightdeck inspect .drivers/openai-sdk/DRIVER.md
    """
    folder = path.resolve() if path.is_dir() else path.resolve().parent
    root = workspace or find_workspace(folder) or Path.cwd()
    if _is_driver(path):
        driver = inspect_driver(path, libraries=libraries, workspace=root)
        ok, data = driver.ok, driver.to_dict()
        if fmt != "json":
            _render_driver(driver)
    else:
        report = inspect_manifest(path, libraries=libraries, workspace=root, strict=strict)
        ok, data = report.ok, report.to_dict()
        if fmt != "json":
            _render(report)
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    if not ok:
        raise SystemExit(1)
