"""`flightdeck catalog list|show|add`: the tool catalog file freeze composes from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from flightdeck.cli._render import fail

_CATALOG = click.option(
    "--catalog",
    "catalog_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The catalog file. Default: [catalog] file of the workspace's flightdeck.toml.",
)
_WORKSPACE = click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where flightdeck.toml is. Default: the current directory's workspace.",
)
_FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")


def _path(catalog_file: Path | None, workspace: Path | None) -> Path:
    """--catalog, else `[catalog] file` of the workspace (relative to it)."""
    if catalog_file is not None:
        return catalog_file
    from flightdeck.config import ConfigError, find_workspace, load_config
    from flightdeck.flightplan import FlightPlanError

    root = (workspace or find_workspace(Path.cwd()) or Path.cwd()).resolve()
    try:
        named = load_config(root).get("catalog.file")
    except ConfigError as exc:
        raise FlightPlanError(exc.code, str(exc)) from None
    if not isinstance(named, str) or not named:
        raise FlightPlanError(
            "catalog.not_configured",
            f"no catalog file: pass --catalog FILE or set [catalog] file in {root}/flightdeck.toml",
        )
    return root / Path(named).expanduser()


@click.group()
def catalog() -> None:
    """The tool catalog file: each tool's versions, each a Dev Container
    Feature pinned by digest, composed into one image at freeze.

    \b
    Examples:
      flightdeck catalog list --catalog tools.catalog.json
      flightdeck catalog show hello --catalog tools.catalog.json
      flightdeck catalog add hello 1.2.0 registry.example/features/hello:1.2.0 \\
          --catalog tools.catalog.json --option greeting=hi
    """


@catalog.command("list")
@_CATALOG
@_WORKSPACE
@_FORMAT
def list_tools(catalog_file: Path | None, workspace: Path | None, fmt: str) -> None:
    """Each tool with its versions and programs."""
    from flightdeck.flightplan import FlightPlanError, load_feature_catalog
    from flightdeck.flightplan.model._features import catalog_to_data

    try:
        data = catalog_to_data(load_feature_catalog(_path(catalog_file, workspace)))
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":  # snake_case, as every command's output (the file keeps its names)
        shown = {"runner_base": data.get("runnerBase"), "tools": data["tools"]}
        click.echo(json.dumps({"ok": True, **shown}, indent=2))
        return
    if "runnerBase" in data:
        click.echo(f"runner base: {data['runnerBase']}")
    for name, tool in data["tools"].items():
        versions = ", ".join(tool["versions"])
        click.echo(f"{name}  {versions}  (programs: {', '.join(tool['programs'])})")


@catalog.command("show")
@click.argument("tool")
@_CATALOG
@_WORKSPACE
@_FORMAT
def show(tool: str, catalog_file: Path | None, workspace: Path | None, fmt: str) -> None:
    """One tool: every version's Feature and options."""
    from flightdeck.flightplan import FlightPlanError, load_feature_catalog
    from flightdeck.flightplan.model._features import catalog_to_data

    try:
        path = _path(catalog_file, workspace)
        data = catalog_to_data(load_feature_catalog(path))
        entry: dict[str, Any] | None = data["tools"].get(tool)
        if entry is None:
            known = ", ".join(data["tools"]) or "none"
            raise FlightPlanError(
                "catalog.unknown_tool", f"{path} has no tool {tool!r} (tools: {known})"
            )
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, "tool": tool, **entry}, indent=2))
        return
    click.echo(f"{tool} (programs: {', '.join(entry['programs'])})")
    for version, spec in entry["versions"].items():
        options = ", ".join(f"{k}={v}" for k, v in spec.get("options", {}).items())
        network = ", ".join(spec.get("network", []))
        extra = (f"  [{options}]" if options else "") + (f"  network: {network}" if network else "")
        click.echo(f"  {version}: {spec['feature']}" + extra)


@catalog.command("add")
@click.argument("tool")
@click.argument("version")
@click.argument("source", metavar="SOURCE")
@click.option("--program", "programs", multiple=True, help="A program the tool provides.")
@click.option("--option", "options", multiple=True, metavar="ID=VALUE", help="A Feature option.")
@click.option("--runner-base", help="Also set the catalog's runner base (an image reference).")
@click.option(
    "--network",
    "network",
    multiple=True,
    metavar="HOST[:PORT]",
    help="A host the Feature's install.sh may download from at freeze (default: none).",
)
@click.option(
    "--push",
    "push_to",
    metavar="HOST/REPO[:TAG]",
    help="For a SOURCE folder: the repository its packed Feature is pushed to (the tag"
    " defaults to VERSION).",
)
@click.option("--insecure-registry", "insecure", multiple=True, metavar="HOST[:PORT]")
@_CATALOG
@_WORKSPACE
@_FORMAT
def add(
    tool: str,
    version: str,
    source: str,
    programs: tuple[str, ...],
    options: tuple[str, ...],
    runner_base: str | None,
    network: tuple[str, ...],
    push_to: str | None,
    insecure: tuple[str, ...],
    catalog_file: Path | None,
    workspace: Path | None,
    fmt: str,
) -> None:
    """Add a Feature as TOOL VERSION, pinned by digest: SOURCE is a registry
    reference (pinned by the digest its tag names now) or a local Feature
    folder (devcontainer-feature.json, install.sh, bundled files), packed
    reproducibly and pushed with --push first. The Feature is fetched back
    and checked (its options included) before the catalog file is written.

    
    Examples:
      flightdeck catalog add hello 1.2.0 registry.example/features/hello:1.2.0
      flightdeck catalog add hello 1.2.0 ./features/hello --push registry.example/features/hello
    """
    from flightdeck.flightplan import FeaturePin, FlightPlanError
    from flightdeck.launch import LaunchError
    from flightdeck.launch.compose._catalog_add import pin_feature, push_folder

    try:
        path = _path(catalog_file, workspace)
        values = dict(_option(text) for text in options)
        reference, packed = source, None
        if _is_folder(source):
            if push_to is None:
                raise FlightPlanError(
                    "catalog.push_required",
                    f"{source} is a Feature folder: name where to push it",
                    hint="--push HOST/REPO[:TAG] (a registry composition can fetch from)",
                )
            folder = Path(source).expanduser()
            reference, packed = push_folder(folder, push_to, version, frozenset(insecure))
        elif push_to is not None:
            raise click.BadParameter("--push goes with a SOURCE folder", param_hint="--push")
        pin = FeaturePin(
            tool, version, version, reference, values, programs or (tool,), tuple(network)
        )
        added = pin_feature(path, pin, frozenset(insecure), runner_base)
    except (FlightPlanError, LaunchError) as exc:
        fail(exc, fmt)
    if packed is not None:
        added["packed"] = {"id": packed.feature_id, "bytes": len(packed.tarball)}
    if fmt == "json":
        click.echo(json.dumps({"ok": True, "tool": tool, "version": version, **added}, indent=2))
        return
    click.echo(f"added {tool} {version}: {added['feature']} to {path}")


def _is_folder(source: str) -> bool:
    """A path (as a shell names one), or an existing folder; else a reference."""
    return source.startswith(("/", "./", "../", "~")) or Path(source).is_dir()


def _option(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise click.BadParameter(f"{text!r} is not ID=VALUE", param_hint="--option")
    return key, value
