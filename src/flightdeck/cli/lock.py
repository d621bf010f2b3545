"""`flightdeck lock create | update | check`: the workspace's flightdeck.lock."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from flightdeck.cli._params import format_option, library_option


def _workspace(value: Path | None) -> Path:
    if value is not None:
        return value
    from flightdeck.config import find_workspace

    return find_workspace(Path.cwd()) or Path.cwd()


_workspace_option = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace (default: the nearest one above the current folder).",
)


@click.group()
def lock() -> None:
    """Own flightdeck.lock: the sha256 of every action the workspace's TOOLs
    and DRIVERs resolve, with paths relative to the workspace.

    \b
    Examples:
      flightdeck lock create
      flightdeck lock check --workspace path/to/workspace
      flightdeck lock update --library vendor/actions
    """


def _run(mode: str, workspace: Path | None, libraries: tuple[Path, ...], fmt: str) -> None:
    from flightdeck.actions import lock_workspace

    report = lock_workspace(_workspace(workspace), mode, libraries=libraries)
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for problem in report.problems:
            click.echo(f"{problem.location}: {problem.message} [{problem.code}]")
        for drift in report.drift:
            click.echo(f"drift: {drift.describe()}")
        if report.error is not None:
            error = report.error
            click.echo(f"error: {error.message} [{error.code}]", err=True)
            if error.hint:
                click.echo(f"hint: {error.hint}", err=True)
        elif report.written:
            click.echo(f"wrote {report.path} ({len(report.entries)} actions)")
        elif report.ok:
            click.echo(f"{report.path} matches the workspace ({len(report.entries)} actions)")
    sys.exit(0 if report.ok else 1)


@lock.command()
@_workspace_option
@library_option
@format_option
def create(workspace: Path | None, libraries: tuple[Path, ...], fmt: str) -> None:
    """Write flightdeck.lock; refuses when it exists (use update). Exit 1 on failure."""
    _run("create", workspace, libraries, fmt)


@lock.command()
@_workspace_option
@library_option
@format_option
def update(workspace: Path | None, libraries: tuple[Path, ...], fmt: str) -> None:
    """Rewrite flightdeck.lock from what the workspace resolves now (accepts changes)."""
    _run("update", workspace, libraries, fmt)


@lock.command()
@_workspace_option
@library_option
@format_option
def check(workspace: Path | None, libraries: tuple[Path, ...], fmt: str) -> None:
    """Compare flightdeck.lock with what the workspace resolves; writes nothing.
    Exit 1 on drift (missing, changed or stale entries) or no lock file."""
    _run("check", workspace, libraries, fmt)
