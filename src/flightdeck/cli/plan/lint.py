"""`flightdeck lint PATH...`: schema + Flight Plan lint for SKILL.md files."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._params import report_format_option
from flightdeck.cli._render import fail, format_diagnostic
from flightdeck.documents import Diagnostic
from flightdeck.flightplan import PlanLoad, load_plan


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@report_format_option
@click.option(
    "--installed",
    "installed",
    multiple=True,
    metavar="REF",
    help="An action installed on this host (repeatable); other required actions become warnings.",
)
@click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Also check each action-call step against the driver and TOOL.md this workspace's"
    " .drivers/ (and configured driver libraries) would run: required inputs, unknown"
    " arguments, declared outputs.",
)
@click.option(
    "--catalog",
    "catalog_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Check environment.tools against this tool catalog file (the one freeze composes"
    " from) instead of the shipped catalog: an unknown name or unmatched version is an error."
    " Default with --workspace: its [catalog] file, if set.",
)
def lint(
    paths: tuple[Path, ...],
    fmt: str,
    installed: tuple[str, ...],
    workspace: Path | None,
    catalog_file: Path | None,
) -> None:
    """Check Flight Plans (SKILL.md) beyond their schema: unique ids, bindings
    that resolve, an acyclic step graph, declared actions, catalog tools, no
    LLM keys outside the llm-seam, and no secret material.

    Exit status: 0 clean (warnings allowed), 1 errors, 2 usage error.

    \b
    Examples:
      flightdeck lint plans/weekly-digest/SKILL.md
      flightdeck lint --format json SKILL.md
      flightdeck lint --format sarif SKILL.md > flightdeck.sarif
      flightdeck lint --installed aileron:metrics.query_series SKILL.md
      flightdeck lint --workspace ~/work/metrics plans/digest/SKILL.md
      flightdeck lint --catalog tools.catalog.json SKILL.md
    """
    loads = [load_plan(path, installed_actions=installed or None) for path in paths]
    if catalog_file is None and workspace is not None:
        catalog_file = _configured_catalog(workspace, fmt)
    if catalog_file is not None:
        from flightdeck.flightplan import FlightPlanError, load_feature_catalog, with_catalog

        try:
            catalog = load_feature_catalog(catalog_file)
        except FlightPlanError as exc:
            fail(exc, fmt if fmt in ("text", "json") else "text")
        loads = [with_catalog(load, catalog) for load in loads]
    if workspace is not None:
        loads = [_with_workspace_checks(load, workspace) for load in loads]
    failed = any(not load.ok for load in loads)
    if fmt == "json":
        files = [
            {
                "path": str(load.path),
                "ok": load.ok,
                "diagnostics": [diag.to_dict() for diag in load.diagnostics],
            }
            for load in loads
        ]
        click.echo(json.dumps({"ok": not failed, "files": files}, indent=2))
    elif fmt in ("github", "sarif"):
        from flightdeck.cli._annotations import github_lines, sarif_log

        pairs = zip(loads, paths, strict=True)
        entries = [(load.path or path, load.diagnostics) for load, path in pairs]
        if fmt == "github":
            for line in github_lines(entries):
                click.echo(line)
        else:
            click.echo(json.dumps(sarif_log(entries), indent=2))
    else:
        for load in loads:
            mark = click.style("✓", fg="green") if load.ok else click.style("✗", fg="red")
            click.echo(f"{mark} {click.style(str(load.path), bold=True)}")
            for diag in load.diagnostics:
                click.echo(format_diagnostic(diag))
    raise SystemExit(1 if failed else 0)


def _configured_catalog(workspace: Path, fmt: str) -> Path | None:
    """`[catalog] file` of the workspace's configuration (reading a catalog
    runs nothing, so an untrusted workspace's is read too)."""
    from flightdeck.config import ConfigError, load_config

    try:
        named = load_config(workspace.resolve()).get("catalog.file")
    except ConfigError as exc:
        fail(exc, fmt if fmt in ("text", "json") else "text")
    return workspace.resolve() / named if isinstance(named, str) and named else None


def _with_workspace_checks(load: PlanLoad, workspace: Path) -> PlanLoad:
    """Add the step-vs-driver diagnostics, located in the plan's file."""
    if load.plan is None or load.document is None:
        return load
    from dataclasses import replace

    from flightdeck.documents import locate
    from flightdeck.launch import LaunchError, code_resolver

    try:
        found = code_resolver(workspace.resolve()).check_plan(load.plan)
    except LaunchError as exc:  # a bad flightdeck.toml in the workspace
        found = [Diagnostic(exc.code, exc.message, hint=exc.hint)]
    file = str(load.path) if load.path else None
    located = tuple(locate(found, file, load.document))
    return replace(load, diagnostics=(*load.diagnostics, *located))
