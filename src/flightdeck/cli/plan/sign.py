"""`flightdeck sign NAME@VERSION --signing-key KEY`: co-sign a stored version."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._passphrase import passphrase_fd_option, passphrase_source
from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError, cosign_version


@click.command()
@click.argument("target")
@click.option(
    "--signing-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The Ed25519 private key (PEM) that co-signs. Default: $FLIGHTDECK_SIGNING_KEY.",
)
@passphrase_fd_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def sign(target: str, signing_key: Path | None, passphrase_fd: int | None, fmt: str) -> None:
    """Add a signature by another key to a frozen version, e.g. to rotate keys.

    TARGET (NAME@VERSION, NAME or a version directory) must verify now; the
    new key signs the same content and signed statement, stored beside
    SKILL.md.sig as SKILL.md.<key id hex>.sig. Nothing else changes.

    \b
    Rotation:
      flightdeck keys generate --name new
      flightdeck sign weekly-metrics-digest@1.0.0 --signing-key new.key
      flightdeck keyring trust github://acme --key new.pub
      flightdeck keyring untrust github://acme --key old.pub
    """
    try:
        outcome = cosign_version(
            target, signing_key=signing_key, passphrase=passphrase_source(passphrase_fd)
        )
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **outcome.to_dict()}, indent=2))
        return
    label = f"@{outcome.version}" if outcome.version else ""
    state = "co-signed" if outcome.created else "already signed by this key (no change)"
    click.echo(f"{outcome.name}{label} {state}: {outcome.key_id}")
    click.echo(f"  {outcome.path}")
