"""`flightdeck schema KIND`"""

from __future__ import annotations

import json

import click

from flightdeck.documents import load_schema, schema_names


@click.command()
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print a shipped JSON Schema (Draft 2020-12); without NAME, list them.

    \b
    Examples:
      flightdeck schema            # list: action, driver, driver-sdk, io, ...
      flightdeck schema action > action.schema.json
    """
    names = schema_names()
    if name is None:
        for known in names:
            click.echo(known)
        return
    if name not in names:
        raise click.BadParameter(f"unknown schema {name!r}; one of: {', '.join(names)}")
    click.echo(json.dumps(load_schema(name), indent=2))
