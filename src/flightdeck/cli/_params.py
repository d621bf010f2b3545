"""Parameter checks shared by commands."""

from __future__ import annotations

from pathlib import Path

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


# Options shared by the commands that resolve action refs (validate, inspect).
library_option = click.option(
    "--library",
    "libraries",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="An action library to resolve refs against (repeatable).",
)
workspace_option = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Resolve refs against this workspace (default: each file's nearest workspace).",
)
strict_option = click.option("--strict", is_flag=True, help="Treat trust downgrades as errors.")
format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
# validate and lint also speak the formats CI systems annotate lines with.
report_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default="text",
    help="github: workflow-command annotations; sarif: a SARIF 2.1.0 log for code scanning.",
)
