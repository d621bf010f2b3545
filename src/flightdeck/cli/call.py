"""`flightdeck call TOOL --driver ID --input '{...}'`"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from flightdeck._bounded import TooLarge, read_at_most
from flightdeck._json import JsonError, read_json
from flightdeck.drivers import (
    DriverChoice,
    DriverError,
    call_tool,
    select_driver,
    stream_tool,
)

# A tool's input is a JSON value held in memory: far past any real input, and
# a bound for a path that never ends.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def _read_input_file(name: str) -> str:
    if not name:
        raise click.BadParameter("'@' must be followed by a file name", param_hint="'--input'")
    try:
        # A device or a pipe (/dev/zero) may never end.
        return read_at_most(Path(name), MAX_INPUT_BYTES).decode("utf-8")
    except TooLarge:
        message = f"{name} is larger than {MAX_INPUT_BYTES:,} bytes"
        raise click.BadParameter(message, param_hint="'--input'") from None
    except UnicodeDecodeError as exc:
        message = f"{name} is not UTF-8 text (byte {exc.start})"
        raise click.BadParameter(message, param_hint="'--input'") from None
    except OSError as exc:  # missing, a directory, a broken link, no permission
        message = f"cannot read {name}: {exc.strerror or exc}"
        raise click.BadParameter(message, param_hint="'--input'") from None


def _parse_input(raw: str) -> Any:
    text = _read_input_file(raw[1:]) if raw.startswith("@") else raw
    source = raw[1:] if raw.startswith("@") else "the value"
    try:
        return read_json(text)
    except JsonError as exc:
        if exc.reason == "too_deep":
            raise click.BadParameter(
                f"{source} is nested too deep", param_hint="'--input'"
            ) from None
        raise click.BadParameter(f"{source} is not JSON: {exc}", param_hint="'--input'") from None


def _fail(error: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps({"ok": False, "error": error}))
    else:
        where = f" ({error['file']}:{error.get('line', '')})" if error.get("file") else ""
        click.echo(f"error: {error['code']}: {error['message']}{where}", err=True)
        if error.get("hint"):
            click.echo(f"hint: {error['hint']}", err=True)
    sys.exit(1)


def _verbose(choice: DriverChoice) -> None:
    for line in choice.explain():
        click.echo(line, err=True)
    report = getattr(choice.driver, "import_report", None)
    if report is not None:
        cached = " (already imported)" if report.cached else ""
        click.echo(f"import {report.module_name}: {report.seconds * 1000:.1f} ms{cached}", err=True)


def _no_driver_hint(tool: str, choice: DriverChoice, verbose: bool) -> str:
    if tool.endswith(".md") or "/" in tool:
        return "TOOL is a tool id (the `id:` of a TOOL.md, e.g. text.stats), not a file"
    if verbose:
        return "each driver's reason is listed above"
    return "run again with -v to see why each driver was rejected"


async def _run(tool: str, value: Any, choice: DriverChoice, fmt: str, ctx: dict[str, Any]) -> None:
    driver = choice.driver
    assert driver is not None
    binding = driver.binding(tool)
    if binding is not None and binding.streaming:
        count = 0
        async for chunk in stream_tool(tool, value, driver=driver, context=ctx):
            count += 1
            if fmt == "json":
                click.echo(json.dumps({"chunk": chunk}))
            elif isinstance(chunk, str):
                click.echo(chunk, nl=False)
            else:
                click.echo(json.dumps(chunk))
            sys.stdout.flush()
        if fmt == "json":
            click.echo(
                json.dumps({"done": True, "tool": tool, "driver": driver.id, "chunks": count})
            )
        else:
            click.echo()
        return
    from flightdeck.audit import default_sink

    # Audited like every other call of an implementor (and its lifecycle events recorded).
    result = await call_tool(tool, value, driver=driver, context=ctx, audit=default_sink())
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    elif isinstance(result.output, str):
        click.echo(result.output)
    else:
        click.echo(json.dumps(result.output, indent=2, ensure_ascii=False))


@click.command()
@click.argument("tool")
@click.option("--driver", "driver_id", help="Driver id (default: resolve among .drivers/*).")
@click.option(
    "--input",
    "raw_input",
    default="{}",
    show_default=True,
    help="Tool input as JSON, or @file.json.",
)
@click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
)
@click.option("--require-tag", "tags", multiple=True, help="Policy tag the driver must carry.")
@click.option("--region", help="Region the driver must serve.")
@click.option("--verbose", "-v", is_flag=True, help="Explain the driver choice and import time.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def call(
    tool: str,
    driver_id: str | None,
    raw_input: str,
    workspace: Path,
    tags: tuple[str, ...],
    region: str | None,
    verbose: bool,
    fmt: str,
) -> None:
    """Call a tool through an in-process SDK driver and print the result
    (streaming tools print chunks as they arrive).

    Exit status: 0 ok, 1 the driver was refused or the call failed, 2 usage error.

    \b
    Examples:
      flightdeck call text.stats --driver textstats-local --input '{"text": "a b"}'
      flightdeck call chat.completion --require-tag pii-safe --input @msg.json -v
      flightdeck call text.word-stream --workspace examples/drivers --input '{"text": "hi"}'
    """
    value = _parse_input(raw_input)
    choice = select_driver(
        workspace, tool, driver_id=driver_id, require_tags=tags, region=region, input=value
    )
    if verbose:
        _verbose(choice)
    if choice.driver is None:
        if choice.refusal is not None:
            _fail(choice.refusal.to_dict(), fmt)
        if choice.known_tools is not None and not tool.endswith(".md") and "/" not in tool:
            known = ", ".join(choice.known_tools)
            _fail(
                {
                    "code": "call.unknown_tool",
                    "message": f"no tool {tool}: no driver in {workspace}/.drivers implements it",
                    "hint": f"known tools: {known}"
                    if known
                    else "the workspace has no drivers; pass --workspace DIR (a folder"
                    " with .drivers/*/DRIVER.md)",
                    "details": choice.to_dict(),
                },
                fmt,
            )
        _fail(
            {
                "code": "no_driver",
                "message": f"{tool}: {choice.reason}",
                "hint": _no_driver_hint(tool, choice, verbose),
                "details": choice.to_dict(),
            },
            fmt,
        )
    ctx = {"workspace": str(workspace.resolve())}
    try:
        asyncio.run(_run(tool, value, choice, fmt, ctx))
    except DriverError as exc:
        _fail(exc.to_dict(), fmt)
