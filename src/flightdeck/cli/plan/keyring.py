"""`flightdeck keyring trust|list|untrust|revoke`: publishers, plan-name pins,
their keys, and revoked keys."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._render import fail, print_table
from flightdeck.flightplan import FlightPlanError, Keyring, Revocation, key_id, load_public_key


@click.group()
def keyring() -> None:
    """Which keys may publish Flight Plans for which authority."""


_FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")


def _scope(publisher: str | None, plan: str | None) -> None:
    if (publisher is None) == (plan is None):
        raise click.UsageError("give either PUBLISHER or --plan NAME")


_plan_option = click.option(
    "--plan",
    help="A plan name (for plans frozen without a publisher) instead of PUBLISHER.",
)


@keyring.command()
@click.argument("publisher", required=False)
@_plan_option
@click.option(
    "--key",
    "key_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The publisher's Ed25519 public key (PEM), obtained from the publisher.",
)
@click.option("--force", is_flag=True, help="Trust a revoked key again (lifts the revocation).")
@_FORMAT
def trust(publisher: str | None, plan: str | None, key_path: Path, force: bool, fmt: str) -> None:
    """Trust KEY for PUBLISHER (github://owner covers all its repos), or pin
    it for the plan name --plan NAME.

    \b
    Examples:
      flightdeck keyring trust github://acme --key acme.pub
      flightdeck keyring trust --plan weekly-metrics-digest --key alice.pub
    """
    _scope(publisher, plan)
    try:
        pem = key_path.read_bytes()
        ring = Keyring()
        if plan is not None:
            entry = ring.trust_plan(plan, pem, force=force)
        else:
            entry = ring.trust(publisher or "", pem, force=force)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **entry.to_dict()}, indent=2))
        return
    click.echo(f"trusted {entry.key_id} for {entry.scope}")


@keyring.command("list")
@_FORMAT
def list_keys(fmt: str) -> None:
    """List trusted publishers, plan-name pins, key ids and revoked keys."""
    try:
        ring = Keyring()
        entries, revoked = ring.entries(), ring.revocations()
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        # A plain list of entries, as before revocations existed; a revoked
        # key's entry says so (`revoked`: the record, else null).
        records = {r.key_id: r.to_dict() for r in revoked}
        out = [{**e.to_dict(), "revoked": records.get(e.key_id)} for e in entries]
        listed = {e.key_id for e in entries}
        out += [
            {"key_id": r.key_id, "revoked": r.to_dict()} for r in revoked if r.key_id not in listed
        ]
        click.echo(json.dumps(out, indent=2))
        return
    if not entries and not revoked:
        click.echo("the keyring is empty")
        return
    flagged = {r.key_id: r for r in revoked}
    rows = [
        (entry.scope, entry.key_id, entry.added_at, _state(flagged.get(entry.key_id)))
        for entry in entries
    ]
    listed = {entry.key_id for entry in entries}
    rows += [("-", r.key_id, "", _state(r)) for r in revoked if r.key_id not in listed]
    print_table(["for", "key id", "added", "state"], rows)


@keyring.command()
@click.argument("publisher", required=False)
@_plan_option
@click.option(
    "--key",
    "key_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Remove only this public key (default: every key of PUBLISHER or the plan).",
)
@_FORMAT
def untrust(publisher: str | None, plan: str | None, key_path: Path | None, fmt: str) -> None:
    """Stop trusting PUBLISHER's keys (or the keys pinned for --plan NAME)."""
    _scope(publisher, plan)
    try:
        pem = key_path.read_bytes() if key_path else None
        only = key_id(load_public_key(pem, code="keyring.invalid_key")) if pem else None
        ring = Keyring()
        if plan is not None:
            removed = ring.untrust_plan(plan, only)
        else:
            removed = ring.untrust(publisher or "", only)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        scope = {"publisher": publisher} if publisher else {"plan": plan}
        click.echo(json.dumps({"ok": True, **scope, "removed": removed}, indent=2))
        return
    click.echo(f"removed {removed} key(s) for {publisher or f'plan {plan}'}")


@keyring.command()
@click.argument("key")
@click.option("--reason", default="", help="Why (kept in keyring.json and shown by list).")
@_FORMAT
def revoke(key: str, reason: str, fmt: str) -> None:
    """Revoke KEY (a key id, or a public key file): no signature by it counts
    again, for any publisher or plan, until 'keyring trust --force'.

    \b
    Example:
      flightdeck keyring revoke sha256:3b1f... --reason "laptop stolen"
    """
    try:
        path = Path(key)
        if not key.startswith("sha256:") and path.is_file():
            key = key_id(load_public_key(path.read_bytes(), code="keyring.invalid_key"))
        record = Keyring().revoke(key, reason)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **record.to_dict()}, indent=2))
        return
    click.echo(f"revoked {record.key_id} at {record.revoked_at}")


def _state(record: Revocation | None) -> str:
    if record is None:
        return ""
    return f"REVOKED {record.revoked_at}" + (f": {record.reason}" if record.reason else "")
