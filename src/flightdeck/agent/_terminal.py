"""`flightdeck agent` without `--json-stream`: a small chat for a person.

It drives the same `AgentSession` as the JSON-stream mode; events are
rendered with rich (markdown streamed in place, tool calls as they run) and
tool approval is asked as y / n / always.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown

from flightdeck.agent import _protocol as p
from flightdeck.agent._app import SetupError, start
from flightdeck.agent._decode import read_command


class _View:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.queue: asyncio.Queue[p.Event] = asyncio.Queue()
        self.text = ""
        self.live: Live | None = None

    def emit(self, event: p.Event) -> None:
        self.queue.put_nowait(event)

    def stream(self, text: str) -> None:
        self.text += text
        if self.live is None:
            self.live = Live(Markdown(self.text), console=self.console, refresh_per_second=12)
            self.live.start()
        self.live.update(Markdown(self.text))

    def settle(self) -> None:
        if self.live is not None:
            self.live.stop()
        self.live, self.text = None, ""


async def _ask(console: Console, request: p.ToolRequestEvent) -> dict[str, Any]:
    console.print(
        f"[bold yellow]? {request.tool.name}[/] ({request.tool.category}) "
        f"{request.tool.description}"
    )
    while True:
        answer = (await asyncio.to_thread(input, "  allow? [y]es / [n]o / [a]lways: ")).strip()
        answer = answer.lower()
        if answer in ("y", "yes"):
            return {"type": "tool_approve", "call_id": request.call_id, "scope": "once"}
        if answer in ("a", "always"):
            return {"type": "tool_approve", "call_id": request.call_id, "scope": "always"}
        if answer in ("n", "no"):
            return {"type": "tool_deny", "call_id": request.call_id, "reason": "User denied"}


async def _render_turn(view: _View, handle: Any) -> None:
    console = view.console
    while True:
        event = await view.queue.get()
        if isinstance(event, p.TextDeltaEvent):
            view.stream(event.text)
            continue
        view.settle()
        if isinstance(event, p.ThinkingEvent):
            console.print(f"[dim italic]{event.text}[/]", end="")
        elif isinstance(event, p.ToolRequestEvent):
            await handle(read_command(_json(await _ask(console, event))))
        elif isinstance(event, p.ToolRunningEvent):
            console.print(f"[cyan]> {event.tool_name}[/] running")
        elif isinstance(event, p.ToolResultEvent):
            colour = "green" if event.status == "success" else "red"
            lines = event.output.splitlines()
            head = "\n".join(lines[:12]) + ("\n..." if len(lines) > 12 else "")
            body = "(image)" if event.output_type == "image" else head
            console.print(f"[{colour}]< {event.tool_name} {event.status}[/]\n{body}", markup=True)
        elif isinstance(event, p.ToolCancelledEvent):
            console.print(f"[red]x cancelled:[/] {event.reason}")
        elif isinstance(event, p.ErrorEvent):
            console.print(f"[bold red]error ({event.error.code}):[/] {event.error.message}")
        elif isinstance(event, p.InfoEvent):
            console.print(f"[dim]{event.message}[/]")
        elif isinstance(event, p.StreamEndEvent):
            u = event.usage
            console.print(f"[dim]tokens: {u.input_tokens} in, {u.output_tokens} out[/]")
            return


def _json(data: dict[str, Any]) -> str:
    import json

    return json.dumps(data)


async def run_terminal(flags: Mapping[str, Any]) -> int:
    """Chat until EOF (Ctrl-D) or `/exit`. Returns the exit code."""
    console = Console()
    view = _View(console)
    try:
        started = start(flags, view.emit)
    except SetupError as exc:
        console.print(f"[bold red]error (config_error):[/] {exc}")
        return 1
    agent = started.session
    from flightdeck.agent._extensions import attach_extensions

    extensions = await attach_extensions(agent)  # MCP, manifest tools, Spawn
    for problem in extensions.problems:
        console.print(f"[yellow]{problem}[/]")
    sid = agent.session.id if agent.session else "(not saved)"
    console.print(f"[bold]flightdeck agent[/] session {sid} - Ctrl-D or /exit to quit")
    count = 0
    while True:
        try:
            text = await asyncio.to_thread(input, "\n> ")
        except (EOFError, KeyboardInterrupt):
            break
        if text.strip() in ("/exit", "/quit"):
            break
        if not text.strip():
            continue
        count += 1
        await agent.handle(p.MessageCommand(type="message", msg_id=f"t{count}", input=text))
        try:
            await _render_turn(view, agent.handle)
        except KeyboardInterrupt:
            await agent.stop()
            view.settle()
    await agent.close()
    await extensions.close()
    return 0
