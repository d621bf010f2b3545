"""`flightdeck skills list|path`: the frozen-skill store."""

from __future__ import annotations

import json

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
