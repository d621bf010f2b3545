"""`flightdeck config path|show`: where configuration lives and what is in effect."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._render import fail
from flightdeck.config import ConfigError, config_paths, explain_config, find_workspace

_FMT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
_WORKSPACE = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace whose flightdeck.toml applies (default: found from the current folder).",
)


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
        fail(exc, fmt)
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


@config.command("trust")
@click.argument(
    "folder",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--remove", is_flag=True, help="Stop trusting the folder.")
@_FMT
def trust(folder: Path | None, remove: bool, fmt: str) -> None:
    """Trust a workspace: let its own files start what they name.

    A workspace's flightdeck.toml may name MCP server commands and its
    .drivers/ hold Python code; the agent starts or imports none of it until
    the workspace is trusted. This adds the folder (default: the workspace
    found from the current folder) to `[trust] workspaces` in the user's
    config.toml, keeping the file's comments.

    \b
    Examples:
      flightdeck config trust ./repo
      flightdeck config trust --remove ./repo
    """
    from flightdeck.config import set_trust

    where = folder if folder is not None else (_workspace(None) or Path.cwd())
    where = where.resolve()
    try:
        changed = set_trust(where, not remove)
    except ConfigError as exc:
        fail(exc, fmt)
    user_file = config_paths(None).user_file
    if fmt == "json":
        data = {"workspace": str(where), "trusted": not remove, "changed": changed}
        click.echo(json.dumps({**data, "file": str(user_file)}, indent=2))
        return
    state = "trusted" if not remove else "not trusted"
    note = "" if changed else " (already so)"
    click.echo(f"{where}: {state}{note}; [trust] workspaces in {user_file}")
