"""`flightdeck skills list|path`: the frozen-skill store."""

from __future__ import annotations

import json
from pathlib import Path

import click

from flightdeck.cli._render import print_table
from flightdeck.flightplan import SkillStore


@click.group()
def skills() -> None:
    """The store of frozen, signed Flight Plans."""


@skills.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def list_skills(fmt: str) -> None:
    """Names, versions, content ids, publishers and frozen times."""
    entries = SkillStore().list()
    if fmt == "json":
        click.echo(json.dumps([entry.to_dict() for entry in entries], indent=2))
        return
    if not entries:
        click.echo("no frozen skills (flightdeck freeze SKILL.md --signing-key KEY)")
        return
    print_table(
        ["name", "version", "id", "publisher", "frozen"],
        [
            (e.name, e.version, e.short_hash, e.publisher, "DAMAGED" if e.damaged else e.frozen_at)
            for e in entries
        ],
    )


@skills.command("path")
def store_path() -> None:
    """Print the store directory."""
    click.echo(str(SkillStore().root))


@skills.command("export")
@click.argument("target", metavar="NAME@VERSION")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The tar file to write (an OCI image layout).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def export_skill(target: str, output: Path, fmt: str) -> None:
    """Write a verified stored version as an OCI image layout tar: the same
    artifact `publish` pushes, for a machine without a registry."""
    from flightdeck.cli._render import fail
    from flightdeck.cli.plan.publish import local_image
    from flightdeck.flightplan import FlightPlanError
    from flightdeck.flightplan.publish._layout import export

    try:
        result = export(target, output, local_image=local_image)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({**result.to_dict(), "path": str(output)}, indent=2))
        return
    click.echo(f"✓ exported {result.name} ({result.id}) to {output}: {result.digest}")


@skills.command("import")
@click.argument("archive", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--tag", default="latest", show_default=True, help="The version to import.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def import_skill(archive: Path, tag: str, fmt: str) -> None:
    """Install a version from an exported layout tar, verified as `install`
    verifies (signature, hashes, code pins, keyring, trust state) before
    anything is stored."""
    from flightdeck.cli._render import fail
    from flightdeck.flightplan import FlightPlanError
    from flightdeck.flightplan.publish._layout import import_layout

    try:
        result = import_layout(archive, tag)
        image = _store_composed(archive, f"{result.name}@{result.id}")
    except FlightPlanError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({**result.to_dict(), "image": image}, indent=2))
        return
    state = "imported" if result.created else "already installed"
    click.echo(f"✓ {state} {result.name}@{result.version} ({result.id}) from {archive}")
    if image is not None:
        click.echo(f"  composed image {image} in the image cache")


def _store_composed(archive: Path, version: str) -> str | None:
    """An imported plan has no registry to pull its composed image from:
    export put it in the tar, so it is stored in the image cache from
    there, every byte checked against the signed lock's digest. The image's
    pinned reference, or None for a plan without a composed image."""
    from flightdeck.flightplan import FlightPlanError, RegistryRefused, verify_plan
    from flightdeck.flightplan.publish._layout import LAYOUT, LayoutReader
    from flightdeck.flightplan.registry._images import parse_image_ref
    from flightdeck.launch import ImageCache, LaunchError
    from flightdeck.launch.image._from_layout import store_image

    lock = verify_plan(version).lock
    if lock is None or not lock.resolved_images or not lock.resolved_images[0].features:
        return None
    pinned = lock.resolved_images[0].pinned
    cache = ImageCache()
    if (cache.folder(pinned) / "ready.json").is_file():
        return pinned
    where = parse_image_ref(f"{LAYOUT}/flightplans")
    reader = LayoutReader(archive)

    def fetch(digest: str, limit: int, dest: Path) -> None:
        reader.blob(where, digest, limit, dest)

    try:
        store_image(pinned, fetch, cache)
    except (LaunchError, RegistryRefused) as exc:
        raise FlightPlanError(
            "install.image_invalid",
            f"{version} is installed, but its composed image {pinned} could not be taken"
            f" from {archive}: {exc.message}",
            hint="export it again from a machine that has the image (an archive exported"
            " before composed images were exported lacks it), or freeze it again here",
        ) from None
    finally:
        reader.close()
    return pinned
