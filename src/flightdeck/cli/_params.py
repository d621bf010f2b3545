"""Parameter checks shared by commands."""

from __future__ import annotations

import click


def utf8_text(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Reject an argument that is not UTF-8 (a lone surrogate from argv).

    Ids such as run ids are looked up in SQLite, which cannot encode one;
    paths keep such bytes and need no check."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise click.BadParameter(f"{value!r} is not valid UTF-8 text") from None
    return value
