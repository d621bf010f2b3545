"""`flightdeck keys generate`: an Ed25519 signing key pair."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError, generate_keys


@click.group()
def keys() -> None:
    """Signing keys for freezing Flight Plans."""


@keys.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Directory for NAME.key (0600) and NAME.pub.",
)
@click.option("--name", default="flightdeck", show_default=True)
@click.option(
    "--encrypt",
    is_flag=True,
    help="Encrypt the private key (PKCS#8) with a passphrase from "
    "FLIGHTDECK_KEY_PASSPHRASE or a prompt.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def generate(out: Path, name: str, encrypt: bool, fmt: str) -> None:
    """Write a PEM Ed25519 key pair: NAME.key (private, mode 0600) and NAME.pub.

    \b
    Example:
      flightdeck keys generate --out ~/.config/flightdeck/keys
      flightdeck keys generate --name acme --format json
    """
    try:
        pair = generate_keys(out, name, _passphrase() if encrypt else None)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        data = {
            "ok": True,
            "private_key": str(pair.private_path),
            "public_key": str(pair.public_path),
            "key_id": pair.key_id,
        }
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"private key: {pair.private_path} (keep it secret)")
    click.echo(f"public key:  {pair.public_path}")
    click.echo(f"key id:      {pair.key_id}")


def _passphrase() -> bytes:
    phrase = os.environ.get("FLIGHTDECK_KEY_PASSPHRASE") or click.prompt(
        "passphrase", hide_input=True, confirmation_prompt=True
    )
    if not phrase:
        raise click.UsageError("an empty passphrase encrypts nothing")
    return str(phrase).encode("utf-8")
