"""`flightdeck config path|show`: where configuration lives and what is in effect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from flightdeck.cli._render import fail
from flightdeck.config import ConfigError, config_paths, explain_config, find_workspace

_FMT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
_WORKSPACE = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace whose flightdeck.toml applies (default: found from the current folder).",
)


class _Failure:
    """A ConfigError as every command reports errors."""

    def __init__(self, error: ConfigError) -> None:
        self.error = error

    def describe(self) -> str:
        return f"error: {self.error.path}: {self.error.message} [{self.error.code}]"

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.error.code,
            "message": self.error.message,
            "file": str(self.error.path),
        }


@click.group()
def config() -> None:
    """The configuration files, the data folder, and the effective settings.

    \b
    Files, later ones winning key by key:
      <config dir>/config.toml      the user's
      <workspace>/flightdeck.toml   the project's
    then FLIGHTDECK_* environment variables, then command-line flags.

    \b
    Examples:
      flightdeck config path
      flightdeck config show --format json
    """


def _workspace(given: Path | None) -> Path | None:
    return given if given is not None else find_workspace(Path.cwd())


@config.command("path")
@_WORKSPACE
@_FMT
def path(workspace: Path | None, fmt: str) -> None:
    """Where the configuration files and the data folder are."""
    paths = config_paths(_workspace(workspace))
    data = paths.to_dict()
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
        return
    rows = [
        ("user config", data["user_file"], data["user_file_exists"]),
        ("project config", data["project_file"], data["project_file_exists"]),
    ]
    for label, where, exists in rows:
        note = "" if exists else click.style("  (not present)", dim=True)
        click.echo(f"{label + ':':<16}{where or '(no workspace here)'}{note if where else ''}")
    click.echo(f"{'data folder:':<16}{data['data_dir']}")


@config.command("show")
@_WORKSPACE
@_FMT
def show(workspace: Path | None, fmt: str) -> None:
    """Every setting in effect and the file or variable it came from."""
    try:
        settings = explain_config(_workspace(workspace))
    except ConfigError as exc:
        fail(_Failure(exc), fmt)
    if fmt == "json":
        click.echo(json.dumps([s.to_dict() for s in settings], indent=2, ensure_ascii=False))
        return
    if not settings:
        click.echo("no settings: every value is the default (see `flightdeck config path`)")
        return
    for setting in settings:
        shown = "<set; secret not shown>" if setting.secret else json.dumps(setting.value)
        origin = click.style(f"  # {setting.source}", dim=True)
        click.echo(f"{setting.key} = {shown}{origin}")
