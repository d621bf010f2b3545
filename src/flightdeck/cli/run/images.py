"""`flightdeck images list|prune`: the cache of pinned images tool steps run in."""

from __future__ import annotations

import json

import click

from flightdeck.cli._render import fail
from flightdeck.launch import ImageCache, LaunchError


@click.group()
def images() -> None:
    """Pinned images pulled for tool steps, cached by digest under the data directory.

    \b
    Examples:
      flightdeck images list
      flightdeck images prune --keep sha256:0123...
    """


@images.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def list_images(fmt: str) -> None:
    """Every cached image: digest, the pinned reference, when pulled, bytes on disk."""
    rows = ImageCache().entries()
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no cached images")
    for row in rows:
        click.echo(f"{row['digest']}  {row['bytes']:>12}  {row['pulled_at']}  {row['pinned']}")


@images.command("prune")
@click.option("--keep", multiple=True, metavar="DIGEST", help="sha256:... to keep (repeatable)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def prune_images(keep: tuple[str, ...], fmt: str) -> None:
    """Remove cached images (all but --keep); a later launch pulls them again."""
    cache = ImageCache()
    for digest in keep:
        try:
            cache.folder(f"x@{digest}")
        except LaunchError as exc:
            fail(exc, fmt, status=2)
    removed = cache.prune(frozenset(keep))
    if fmt == "json":
        click.echo(json.dumps({"removed": removed}, indent=2))
        return
    click.echo(f"removed {len(removed)} cached image(s)")
    for digest in removed:
        click.echo(f"  {digest}")
