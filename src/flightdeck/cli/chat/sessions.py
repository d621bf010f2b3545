"""`flightdeck sessions list|show|rm|path`: the agent's saved conversations."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

import click

_FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")


def _store() -> Any:
    from flightdeck.agent import SessionStore
    from flightdeck.agent._app import sessions_root

    return SessionStore(sessions_root())


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


@click.group()
def sessions() -> None:
    """Saved agent sessions (under the user data directory).

    \b
    Examples:
      flightdeck sessions list
      flightdeck sessions show latest --format json
      flightdeck sessions rm 20261122-101500-a1b2c3
      flightdeck agent --json-stream --resume latest
    """


@sessions.command("list")
@_FORMAT
def list_(fmt: str) -> None:
    """Sessions, most recently updated first."""
    infos = _store().list()
    if fmt == "json":
        click.echo(json.dumps([i.to_json() for i in infos], indent=2))
        return
    if not infos:
        click.echo("no sessions")
        return
    from flightdeck.cli._render import print_table

    print_table(
        ["session", "updated", "steps", "title"],
        [(i.id, _when(i.updated), str(i.steps), i.title) for i in infos],
    )


@sessions.command()
@click.argument("session_id")
@_FORMAT
def show(session_id: str, fmt: str) -> None:
    """One session's conversation (SESSION_ID or `latest`)."""
    from flightdeck.agent import SessionError
    from flightdeck.agent.engine._codec import message_to_json

    try:
        session = _store().open(session_id)
    except SessionError as exc:
        _fail(str(exc))
        return
    loaded = session.load()
    if fmt == "json":
        out = {
            **session.info().to_json(),
            "context": loaded.context,
            "messages": [message_to_json(m) for m in loaded.history],
            "problems": loaded.problems,
        }
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    for problem in loaded.problems:
        click.echo(f"warning: {problem}", err=True)
    for text in loaded.context:
        click.echo(f"[context]\n{text}\n")
    for message in loaded.history:
        for block in message_to_json(message)["content"]:
            click.echo(f"[{message.role}] {_describe(block)}")


def _describe(block: dict[str, Any]) -> str:
    kind = block["type"]
    if kind in ("text", "thinking"):
        return str(block["text"]) if kind == "text" else f"(thinking) {block['text']}"
    if kind == "tool_use":
        return f"-> {block['name']} {json.dumps(block['input'], ensure_ascii=False)}"
    if kind == "tool_result":
        texts = [b.get("text", "(image)") for b in block["content"]]
        flag = " (error)" if block.get("is_error") else ""
        return f"<- result{flag}: {' '.join(texts)[:500]}"
    return "(image)"


@sessions.command()
@click.argument("session_id")
def rm(session_id: str) -> None:
    """Delete a session."""
    from flightdeck.agent import SessionError

    try:
        _store().remove(session_id)
    except SessionError as exc:
        _fail(str(exc))
        return
    click.echo(f"removed {session_id}")


@sessions.command()
def path() -> None:
    """Print the directory sessions are stored in."""
    click.echo(str(_store().root))
