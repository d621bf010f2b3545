"""`flightdeck keyring trust|list|untrust`: publishers and their keys."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._render import fail, print_table
from flightdeck.flightplan import FlightPlanError, Keyring, key_id, load_public_key


@click.group()
def keyring() -> None:
    """Which keys may publish Flight Plans for which authority."""


_FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")


@keyring.command()
@click.argument("publisher")
@click.option(
    "--key",
    "key_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The publisher's Ed25519 public key (PEM).",
)
@_FORMAT
def trust(publisher: str, key_path: Path, fmt: str) -> None:
    """Trust KEY for PUBLISHER (github://owner covers all its repos).

    \b
    Example:
      flightdeck keyring trust github://acme --key acme.pub
    """
    try:
        entry = Keyring().trust(publisher, key_path.read_bytes())
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **entry.to_dict()}, indent=2))
        return
    click.echo(f"trusted {entry.key_id} for {entry.publisher}")


@keyring.command("list")
@_FORMAT
def list_keys(fmt: str) -> None:
    """List trusted publishers and key ids."""
    try:
        entries = Keyring().entries()
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps([e.to_dict() for e in entries], indent=2))
        return
    if not entries:
        click.echo("the keyring is empty")
        return
    print_table(
        ["publisher", "key id", "added"], [(e.publisher, e.key_id, e.added_at) for e in entries]
    )


@keyring.command()
@click.argument("publisher")
@click.option(
    "--key",
    "key_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Remove only this public key (default: every key of PUBLISHER).",
)
@_FORMAT
def untrust(publisher: str, key_path: Path | None, fmt: str) -> None:
    """Stop trusting PUBLISHER's keys."""
    try:
        pem = key_path.read_bytes() if key_path else None
        only = key_id(load_public_key(pem, code="keyring.invalid_key")) if pem else None
        removed = Keyring().untrust(publisher, only)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, "publisher": publisher, "removed": removed}, indent=2))
        return
    click.echo(f"removed {removed} key(s) for {publisher}")
