"""`flightdeck verify NAME[@VERSION]|PATH`"""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError, verify_plan


@click.command()
@click.argument("target")
@click.option(
    "--key",
    "expected_key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A public key (PEM), obtained from the publisher, that must have signed the plan "
    "(first signer or co-signer). For a plan without a publisher it stands in for a "
    "keyring pin of the name.",
)
@click.option(
    "--allow-rollback",
    is_flag=True,
    help="Accept a version older than the newest verified; needs NAME@VERSION.",
)
@click.option(
    "--repin",
    is_flag=True,
    help="Pin the plan name to the publisher (or key) that signed this version.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def verify(
    target: str, expected_key: Path | None, allow_rollback: bool, repin: bool, fmt: str
) -> None:
    """Verify a frozen Flight Plan: recompute its content hash, check the
    Ed25519 signatures, and that one signer is trusted for its publisher (or
    pinned for its name) in the keyring and not revoked.

    TARGET is NAME, NAME@VERSION (semver label or hash prefix), a store
    version directory, or a frozen SKILL.md with SKILL.md.sig, lock.json,
    signer.pub.pem (and code-pins.json when it pins code) beside it. Exit
    status 0 verified, 1 refused.

    The first verify of a name pins it to its publisher (or signing key);
    an older version than the newest verified is refused unless asked for
    as NAME@VERSION with --allow-rollback.

    \b
    Examples:
      flightdeck verify weekly-metrics-digest
      flightdeck verify weekly-metrics-digest@1.0.0 --format json
    """
    try:
        verified = verify_plan(
            target,
            key=expected_key.read_bytes() if expected_key else None,
            allow_rollback=allow_rollback,
            repin=repin,
        )
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps(verified.to_dict(), indent=2))
        return
    label = f"@{verified.version}" if verified.version else ""
    click.echo(f"✓ {verified.name}{label} verified: {verified.content_hash}")
    click.echo(f"  signer {verified.signer_key_id}")
    click.echo(f"  publisher {verified.publisher or '(none: pinned to the signing key)'}")
    click.echo(f"  signed at {verified.signed_at}")
    if verified.first_trust:
        owner = verified.publisher or verified.signer_key_id
        click.echo(f"  first trust: {verified.name} is now pinned to {owner}")
