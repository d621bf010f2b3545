"""`flightdeck keys generate`: an Ed25519 signing key pair."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._passphrase import passphrase_fd_option, passphrase_source
from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError, generate_keys, resolve_passphrase


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
    help="Encrypt the private key (PKCS#8) with a passphrase from --passphrase-fd, "
    "FLIGHTDECK_KEY_PASSPHRASE or a prompt (on a terminal).",
)
@passphrase_fd_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def generate(out: Path, name: str, encrypt: bool, passphrase_fd: int | None, fmt: str) -> None:
    """Write a PEM Ed25519 key pair: NAME.key (private, mode 0600) and NAME.pub.

    \b
    Example:
      flightdeck keys generate --out ~/.config/flightdeck/keys
      flightdeck keys generate --name acme --format json
    """
    try:
        phrase = _passphrase(passphrase_fd) if encrypt else None
        pair = generate_keys(out, name, phrase)
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


def _passphrase(fd: int | None) -> bytes:
    phrase = resolve_passphrase(passphrase_source(fd, confirm=True))
    if phrase is None:
        raise FlightPlanError(
            "keys.passphrase_needed",
            "--encrypt needs a passphrase and none was given",
            hint="pass --passphrase-fd N, set FLIGHTDECK_KEY_PASSPHRASE, "
            "or run on a terminal to be asked",
        )
    return phrase
