"""Slash commands of the terminal chat, handled locally (never sent to the
model): /help, /exit, /clear, /model, /sessions, /resume."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.engine._store import SessionError, SessionStore
from flightdeck.agent.protocol import _models as p
from flightdeck.llm import Message, TextBlock, ToolResultBlock, ToolUseBlock

HELP = """Commands (handled here, not sent to the model):
  /help             this list
  /exit             leave (Ctrl-D at the prompt does the same)
  /clear            start a new conversation (a new session)
  /model [NAME]     show the model, or use NAME from the next message
  /sessions         list saved sessions, newest first
  /resume ID|latest continue a saved session (its conversation is shown)
  /mcp__SERVER__PROMPT ARGS  an MCP server's prompt, sent as the message
Ctrl-C cancels a running reply; at the prompt it leaves."""


@dataclass
class Outcome:
    exit: bool = False


def is_command(text: str, agent: AgentSession | None = None) -> bool:
    """A command handled here. An MCP server's prompt (`/mcp__<server>__<prompt>`)
    is not: it goes to the session as a message, which expands it."""
    if not text.startswith("/") or text.startswith("//"):
        return False
    name = text[1:].split(" ", 1)[0]
    return agent is None or name not in agent.mcp_prompts


async def run_command(text: str, agent: AgentSession, console: Console) -> Outcome:
    name, _, arg = text.strip().partition(" ")
    arg = arg.strip()
    if name in ("/exit", "/quit"):
        return Outcome(exit=True)
    if name == "/help":
        console.print(escape(HELP))
    elif name == "/clear":
        _clear(agent, console)
    elif name == "/model":
        if arg:
            await agent.handle(p.SetConfigCommand(type="set_config", model=arg))
        else:
            console.print(f"model: {agent.settings.model}")
    elif name == "/sessions":
        _list(console)
    elif name == "/resume":
        _resume(agent, arg or "latest", console)
    else:
        console.print(f"unknown command {escape(name)}; /help lists them")
    return Outcome()


def _store() -> SessionStore:
    from flightdeck.agent.engine._setup import sessions_root

    return SessionStore(sessions_root())


def _clear(agent: AgentSession, console: Console) -> None:
    agent.history.clear()
    agent.context.clear()
    if agent.session is not None:
        meta = agent.session.meta()
        keep = {k: meta[k] for k in ("provider", "model", "workspace") if k in meta}
        agent.session = _store().create(**keep)
        console.print(f"new conversation, session {agent.session.id}")
    else:
        console.print("new conversation")


def _list(console: Console) -> None:
    infos = _store().list()
    if not infos:
        console.print("no saved sessions")
    for info in infos[:20]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
        console.print(f"{info.id}  {when}  {info.steps:>3} steps  {escape(info.title)}")


def _resume(agent: AgentSession, ref: str, console: Console) -> None:
    try:
        session = _store().open(ref)
    except SessionError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        return
    loaded = session.load(repair=True)
    agent.session = session
    agent.history[:] = loaded.history
    agent.context[:] = loaded.context
    console.print(f"resumed session {session.id}")
    show_history(loaded.history, console)


def show_history(history: list[Message], console: Console) -> None:
    """The conversation so far, one short paragraph per message."""
    for message in history:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                who = "you" if message.role == "user" else "agent"
                text = block.text.strip()
                text = text if len(text) <= 800 else text[:800] + " ..."
                console.print(f"[bold]{who}:[/] {escape(text)}")
            elif isinstance(block, ToolUseBlock):
                console.print(f"[cyan]  ({block.name})[/]")
            elif isinstance(block, ToolResultBlock) and block.is_error:
                console.print("[red]  (tool failed)[/]")
