"""`flightdeck freeze PATH`: seal a Flight Plan into the signed store."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._passphrase import passphrase_fd_option, passphrase_source
from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError, OciResolver, freeze_plan


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--signing-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Ed25519 private key (PEM). Default: $FLIGHTDECK_SIGNING_KEY (a path or PEM text).",
)
@click.option("--publisher", help="Publisher authority: github://owner or github://owner/repo.")
@click.option("--version", "version", help="Semver label for this frozen version, e.g. 1.0.0.")
@click.option(
    "--insecure-registry",
    "insecure",
    multiple=True,
    metavar="HOST[:PORT]",
    help="Registry spoken to over plain http (loopback registries always are).",
)
@passphrase_fd_option
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where .drivers/ and flightdeck.toml are: the drivers whose code is pinned."
    " Default: the plan's nearest workspace (a folder with .drivers/, .actions/, .tools/,"
    " flightdeck.toml or WORKSPACE.md), else the current directory.",
)
@click.option(
    "--no-code-pins",
    "unpinned",
    is_flag=True,
    help="Do not pin driver code (the drivers are not on this machine); launch warns.",
)
@click.option(
    "--catalog",
    "catalog_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A tool catalog file: environment.tools are composed from its Features into one"
    " image. Default: [catalog] file in the workspace's flightdeck.toml, if set.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def freeze(
    path: Path,
    signing_key: Path | None,
    publisher: str | None,
    version: str | None,
    insecure: tuple[str, ...],
    passphrase_fd: int | None,
    workspace: Path | None,
    unpinned: bool,
    catalog_file: Path | None,
    fmt: str,
) -> None:
    """Freeze a SKILL.md: lint, resolve the environment image to a digest and
    tool versions against the catalog, seal tool-step trust, pin the code of
    the driver behind every action ref (found in --workspace), write the lock,
    hash the canonical bytes, sign (Ed25519) and store it immutably.

    \b
    Examples:
      flightdeck keys generate --out ~/.keys
      flightdeck freeze SKILL.md --signing-key ~/.keys/flightdeck.key --version 1.0.0
      flightdeck freeze SKILL.md --publisher github://acme/plans --version 1.1.0
      flightdeck freeze plans/digest/SKILL.md --workspace ~/work/metrics --version 1.2.0
      flightdeck freeze SKILL.md --catalog tools.catalog.json --version 1.0.0
    """
    try:
        passphrase = passphrase_source(passphrase_fd)
    except FlightPlanError as exc:
        fail(exc, fmt)
    from flightdeck.launch import LaunchError, catalog_composer, code_resolver

    resolver = OciResolver(insecure_hosts=frozenset(insecure))
    try:
        root = _workspace(path, workspace)
        tools, composer = catalog_composer(root, catalog_file, frozenset(insecure))
        outcome = freeze_plan(
            path,
            signing_key=signing_key,
            publisher=publisher,
            version=version,
            resolver=resolver,
            passphrase=passphrase,
            code=None if unpinned else code_resolver(root),
            tools=tools,
            composer=composer,
        )
    except (FlightPlanError, LaunchError) as exc:  # LaunchError: a bad flightdeck.toml
        fail(exc, fmt)
    finally:
        resolver.close()
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **outcome.to_dict()}, indent=2))
        return
    entry = outcome.stored
    state = "frozen" if outcome.created else "already frozen (no change)"
    label = f"@{entry.version}" if entry.version else ""
    click.echo(f"{entry.name}{label} {state}: {entry.content_hash}")
    click.echo(f"  stored at {entry.path}")
    for image in outcome.frozen.lock.get("resolvedImages", []):
        if image.get("features"):
            click.echo(f"  composed image {image['digest']} ({image['localTag']})")
            for feature in image["features"]:
                click.echo(f"    {feature['tool']}@{feature['version']}: {feature['feature']}")
    for pin in outcome.frozen.code_pins:
        click.echo(f"  code of {pin.driver} pinned: {pin.digest} ({pin.location})")
    if unpinned:
        click.echo("warning: driver code not pinned (--no-code-pins); launch will say so", err=True)
    if outcome.key_pinned:
        click.echo(
            f"  no publisher: pinned signing key {outcome.frozen.signature.key_id} "
            f"for {entry.name} in the keyring"
        )
    for warning in outcome.warnings:
        text = f"warning: {warning['message']} [{warning['code']}]"
        click.echo(click.style(text, fg="yellow"), err=True)
        if warning["hint"]:
            click.echo(f"hint: {warning['hint']}", err=True)


def _workspace(plan: Path, given: Path | None) -> Path:
    """--workspace, else the plan's own workspace (where `validate` looks too),
    else the current directory."""
    if given is not None:
        return given.resolve()
    from flightdeck.config import find_workspace

    return find_workspace(plan.resolve().parent) or Path.cwd()
