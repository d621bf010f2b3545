"""`flightdeck agent` without `--json-stream`: a small chat for a person.

It drives the same `AgentSession` as the JSON-stream mode; events are
rendered with rich (markdown streamed in place, tool calls as they run) and
tool approval is asked as y / n / always. Ctrl-C cancels the running reply
(and a pending approval question); at the prompt it leaves. Lines starting
with `/` are commands handled here (`_slash.py`). Input is read on daemon
threads so leaving never waits for a line that will not come.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape

from flightdeck.agent._app import SetupError, start
from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.protocol._decode import read_command
from flightdeck.agent.terminal._slash import is_command, run_command, show_history
from flightdeck.config import Trust

PROMPT = "\nyou › "


class _View:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.queue: asyncio.Queue[p.Event] = asyncio.Queue()
        self.text = ""
        self.live: Live | None = None
        # the line being waited for (prompt or approval); Ctrl-C cancels it
        self.reading: asyncio.Future[str] | None = None
        self.stopping: asyncio.Future[None] | None = None

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


async def read_line(view: _View, prompt: str) -> str:
    """One line from the terminal, read on a daemon thread. Raises EOFError
    at end of input and CancelledError when Ctrl-C cancels the wait."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def deliver(line: str | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    def worker() -> None:
        try:
            line = input(prompt)
        except (EOFError, OSError, ValueError):
            loop.call_soon_threadsafe(deliver, None, EOFError())
        else:
            loop.call_soon_threadsafe(deliver, line, None)

    threading.Thread(target=worker, name="flightdeck-input", daemon=True).start()
    view.reading = future
    try:
        return await future
    finally:
        view.reading = None


async def _ask(view: _View, request: p.ToolRequestEvent) -> dict[str, Any] | None:
    console = view.console
    console.print(
        f"[bold yellow]? {request.tool.name}[/] ({request.tool.category}) "
        f"{escape(request.tool.description)}"
    )
    while True:
        try:
            answer = (await read_line(view, "  allow? [y]es / [n]o / [a]lways: ")).strip()
        except asyncio.CancelledError:  # Ctrl-C: the turn is being stopped
            return None
        except EOFError:
            return {
                "type": "tool_deny",
                "call_id": request.call_id,
                "reason": "client closed input",
            }
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
            decision = await _ask(view, event)
            if decision is not None:
                await handle(read_command(_json(decision)))
        elif isinstance(event, p.ToolRunningEvent):
            console.print(f"[cyan]> {event.tool_name}[/] running")
        elif isinstance(event, p.ToolResultEvent):
            colour = "green" if event.status == "success" else "red"
            lines = event.output.splitlines()
            head = "\n".join(lines[:12]) + ("\n..." if len(lines) > 12 else "")
            body = "(image)" if event.output_type == "image" else head
            console.print(f"[{colour}]< {event.tool_name} {event.status}[/]\n{escape(body)}")
        elif isinstance(event, p.ToolProgressEvent):
            total = f"/{event.total:g}" if event.total is not None else ""
            note = f" {escape(event.message)}" if event.message else ""
            console.print(f"[dim]  {event.tool_name} {event.progress:g}{total}{note}[/]")
        elif isinstance(event, p.ToolCancelledEvent):
            console.print(f"[red]x cancelled:[/] {escape(event.reason)}")
        elif isinstance(event, p.ErrorEvent):
            console.print(f"[bold red]error ({event.error.code}):[/] {escape(event.error.message)}")
        elif isinstance(event, p.InfoEvent):
            console.print(f"[dim]{escape(event.message)}[/]")
        elif isinstance(event, p.StreamEndEvent):
            u = event.usage
            console.print(f"[dim]tokens: {u.input_tokens} in, {u.output_tokens} out[/]")
            return


def _json(data: dict[str, Any]) -> str:
    import json

    return json.dumps(data)


async def run_terminal(flags: Mapping[str, Any]) -> int:
    """Chat until EOF (Ctrl-D), `/exit` or Ctrl-C at the prompt. Returns the exit code."""
    console = Console()
    view = _View(console)
    trust = await _ask_trust(view, flags)  # before anything is started or set
    if trust is not None:  # for this chat: its settings too
        flags = {**flags, "trust_workspace": True}
    try:
        started = start(flags, view.emit)
    except SetupError as exc:
        console.print(f"[bold red]error (config_error):[/] {exc}")
        return 1
    agent = started.session
    from flightdeck.agent.extensions._load import attach_extensions

    extensions = await attach_extensions(agent, trust)  # MCP, manifest tools, Spawn
    for problem in [*started.problems, *extensions.problems]:
        console.print(f"[yellow]{escape(problem)}[/]")
    sid = agent.session.id if agent.session else "(not saved)"
    console.print(f"[bold]flightdeck agent[/] session {sid} - /help for commands, Ctrl-D to quit")
    if flags.get("resume") and agent.history:
        show_history(agent.history, console)
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, lambda: _on_interrupt(agent, view, interrupted))
    try:
        await _chat(agent, view, interrupted)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        view.settle()
        await agent.close()
        await extensions.close()
    return 0


async def _ask_trust(view: _View, flags: Mapping[str, Any]) -> Trust | None:
    """Ask the person before the workspace's own files start anything (its
    MCP server commands, its drivers' code) or loosen a setting (its mode,
    sandbox, provider endpoint). None: nothing to ask, or no: the usual
    decision then holds them back and says how to trust."""
    from flightdeck.agent.extensions._load import workspace_starts
    from flightdeck.config import set_trust

    workspace = Path(flags.get("workspace") or ".").resolve()
    if not workspace.is_dir():
        return None  # the start reports it
    starts, sets = workspace_starts(workspace, host=flags.get("trust_workspace") is True)
    if not starts and not sets:
        return None
    console = view.console
    for heading, lines in (("would start", starts), ("would loosen your settings", sets)):
        if lines:
            console.print(f"[bold yellow]? Workspace {escape(str(workspace))} {heading}:[/]")
        for line in lines:
            console.print(f"  {escape(line)}")
    try:
        answer = (await read_line(view, "  trust it? [y]es / [a]lways / [N]o: ")).strip().lower()
    except (EOFError, asyncio.CancelledError):
        return None
    if answer in ("a", "always"):
        from flightdeck.config import ConfigError

        try:
            set_trust(workspace)
        except ConfigError as exc:
            console.print(f"[red]not remembered: {escape(str(exc))}[/]")
        return Trust(True, "person")
    return Trust(True, "person") if answer in ("y", "yes") else None


def _on_interrupt(agent: AgentSession, view: _View, interrupted: asyncio.Event) -> None:
    """Ctrl-C: stop the running reply; at the prompt, leave."""
    interrupted.set()
    if agent.busy:
        view.stopping = asyncio.ensure_future(agent.stop())
    if view.reading is not None and not view.reading.done():
        view.reading.cancel()


async def _chat(agent: AgentSession, view: _View, interrupted: asyncio.Event) -> None:
    console = view.console
    count = 0
    while True:
        interrupted.clear()
        try:
            text = await read_line(view, PROMPT)
        except (EOFError, asyncio.CancelledError):
            return  # Ctrl-D, or Ctrl-C at the prompt
        if not text.strip():
            continue
        if is_command(text.strip(), agent):
            if (await run_command(text.strip(), agent, console)).exit:
                return
            _drain(view)
            continue
        count += 1
        await agent.handle(p.MessageCommand(type="message", msg_id=f"t{count}", input=text))
        await _render_turn(view, agent.handle)
        if interrupted.is_set():
            console.print("[dim]cancelled[/]")


def _drain(view: _View) -> None:
    """Show what a local command produced (an `info`, `config_changed`)."""
    while not view.queue.empty():
        event = view.queue.get_nowait()
        if isinstance(event, p.InfoEvent):
            view.console.print(f"[dim]{escape(event.message)}[/]")
