"""`flightdeck verify NAME[@VERSION]|PATH`"""

from __future__ import annotations

import json

import click

from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError, verify_plan


@click.command()
@click.argument("target")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def verify(target: str, fmt: str) -> None:
    """Verify a frozen Flight Plan: recompute its content hash, check the
    Ed25519 signature and that its publisher's key is in the keyring.

    TARGET is NAME, NAME@VERSION (semver label or hash prefix), a store
    version directory, or a frozen SKILL.md with SKILL.md.sig and
    signer.pub.pem beside it. Exit status 0 verified, 1 refused.

    \b
    Examples:
      flightdeck verify weekly-metrics-digest
      flightdeck verify weekly-metrics-digest@1.0.0 --format json
    """
    try:
        verified = verify_plan(target)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps(verified.to_dict(), indent=2))
        return
    label = f"@{verified.version}" if verified.version else ""
    click.echo(f"✓ {verified.name}{label} verified: {verified.content_hash}")
    click.echo(f"  signer {verified.signer_key_id}")
    click.echo(f"  publisher {verified.publisher or '(none: no publisher gate)'}")
