"""One ACP session: an `AgentSession` whose protocol events become the
client's `session/update` notifications, whose approvals become
`session/request_permission` requests, and whose turn ends answer the
pending `session/prompt` requests.

The engine emits synchronously; the client is reached asynchronously. Events
go through one queue drained in order by one task, so notifications leave in
the order the engine emitted them and a prompt is answered only after every
update of its turn has been sent. What an event alone does not say (the
arguments of a call that ran without asking, why a turn ended) is read from
the engine's turn state at the moment it is emitted.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from acp import (
    Client,
    RequestError,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    StopReason,
    ToolCallStatus,
    ToolCallUpdate,
)

from flightdeck.agent.acp._content import describe, locations, tool_kind
from flightdeck.agent.acp._diffs import Diffs, Reader
from flightdeck.agent.acp._mcp import announce_commands, show_sign_in
from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import ToolFailure
from flightdeck.llm import Message, ToolUseBlock

# The engine's reasons (the model's stop reason, or "max_turns") as ACP's.
_STOP: dict[str, StopReason] = {
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "max_turns": "max_turn_requests",
}
# Errors that end a turn without a usable answer: the prompt fails with them.
_FATAL = frozenset({"provider_error", "config_error", "context_overflow", "internal_error"})

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]
REJECTED_ALWAYS = "Rejected for this session by the user"


@dataclass
class TerminalStarted:
    """A Bash call's command now runs in the client's terminal `terminal_id`."""

    command: str
    terminal_id: str


@dataclass
class CommandsChanged:
    """The session's slash commands (MCP prompts) are to be sent to the client."""


# what the pump delivers besides the engine's events
Queued = p.Event | TerminalStarted | CommandsChanged


@dataclass
class TurnEnd:
    stop_reason: str
    error: p.ErrorInfo | None = None


class Bridge:
    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.id = session_id
        self.agent: AgentSession | None = None
        self.closers: list[Any] = []  # extension sets to close with the session
        self._events: asyncio.Queue[tuple[Queued, Any]] = asyncio.Queue()
        self._pump = asyncio.create_task(self._drain())
        self._turns: dict[str, asyncio.Future[TurnEnd]] = {}
        self._started: set[str] = set()
        self._cancelled: set[str] = set()
        self._errors: dict[str, p.ErrorInfo] = {}
        self._announced: set[str] = set()
        self._rejected: set[str] = set()  # tool names rejected for the session
        self._asking: set[asyncio.Task[None]] = set()  # also sign-in elicitations
        self._args: dict[str, dict[str, Any]] = {}  # call_id -> arguments, until its result
        self.diffs: Diffs | None = None
        self._terminals: set[str] = set()  # call ids shown with a client terminal
        self.url_elicitation = False  # the client can show a URL (`elicitation.url`)

    def on_terminal(self, command: str, terminal_id: str) -> None:
        """From the client-terminal Bash: embed the terminal in its call."""
        self._events.put_nowait((TerminalStarted(command, terminal_id), None))

    def keep(self, task: asyncio.Task[None]) -> None:
        """A request to the client that runs beside the queue; cancelled on close."""
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    def commands_changed(self) -> None:
        """Send the MCP prompts as the client's slash commands, after what is
        already queued (so after `session/new` has answered, in practice)."""
        self._events.put_nowait((CommandsChanged(), None))

    def diffs_for(self, reader: Reader) -> Diffs:
        """Where this session's Write and Edit keep their changes."""
        self.diffs = Diffs(reader)
        return self.diffs

    # ---- from the engine (synchronous) ---------------------------------------

    def emit(self, event: p.Event) -> None:
        state = self.agent.current_state if self.agent is not None else None
        extra: Any = None
        if isinstance(event, p.StreamStartEvent):
            self._started.add(event.msg_id)
        elif isinstance(event, p.StreamEndEvent) and state is not None:
            extra = state.stop_reason
        elif isinstance(event, p.ToolRunningEvent) and state is not None and state.reply:
            extra = next(
                (
                    b.input
                    for b in state.reply.content
                    if isinstance(b, ToolUseBlock) and b.id == event.call_id
                ),
                None,
            )
        self._events.put_nowait((event, extra))

    # ---- to the client ----------------------------------------------------------

    async def send(self, update: Any) -> None:
        await self.client.session_update(session_id=self.id, update=update)

    async def _drain(self) -> None:
        while True:
            event, extra = await self._events.get()
            try:
                await self._deliver(event, extra)
            except Exception as exc:  # a client gone or a bad update: keep serving
                print(f"flightdeck agent: acp: {type(exc).__name__}: {exc}", file=sys.stderr)

    async def _deliver(
        self, event: p.Event | TerminalStarted | CommandsChanged, extra: Any
    ) -> None:
        if isinstance(event, TerminalStarted):
            await self._on_terminal(event)
        elif isinstance(event, CommandsChanged):
            await announce_commands(self)
        elif isinstance(event, p.TextDeltaEvent):
            await self.send(update_agent_message_text(event.text))
        elif isinstance(event, p.ThinkingEvent):
            await self.send(update_agent_thought_text(event.text))
        elif isinstance(event, p.ToolRequestEvent):
            await self._on_request(event)
        elif isinstance(event, p.ToolRunningEvent):
            await self._on_running(event, extra)
        elif isinstance(event, p.ToolResultEvent):
            await self._on_result(event)
        elif isinstance(event, p.ToolProgressEvent):
            await self._on_progress(event)
        elif isinstance(event, p.ToolCancelledEvent):
            self._forget(event.call_id)
            content = [tool_content(text_block(event.reason))]
            await self.send(update_tool_call(event.call_id, status="failed", content=content))
        elif isinstance(event, p.ErrorEvent):
            # A sub-agent's failure (Spawn forwards it, labelled) is its tool
            # call's result, not the end of the parent's turn.
            sub_agent = event.error.message.startswith("[sub-agent ")
            if event.msg_id in self._turns and event.error.code in _FATAL and not sub_agent:
                self._errors.setdefault(event.msg_id, event.error)
            else:
                print(f"flightdeck agent: {event.error.message}", file=sys.stderr)
        elif isinstance(event, p.InfoEvent):
            print(f"flightdeck agent: {event.message}", file=sys.stderr)
        elif isinstance(event, p.McpAuthRequiredEvent):
            await show_sign_in(self, event)
        elif isinstance(event, p.StreamEndEvent):
            self._started.discard(event.msg_id)
            future = self._turns.pop(event.msg_id, None)
            if future is not None and not future.done():
                error = self._errors.pop(event.msg_id, None)
                future.set_result(TurnEnd(str(extra or "end_turn"), error))

    async def _on_result(self, event: p.ToolResultEvent) -> None:
        status: ToolCallStatus = "completed" if event.status == "success" else "failed"
        args = self._args.get(event.call_id, {})
        self._forget(event.call_id)
        change = self._change(args) if event.status == "success" else None
        content: list[Any] | None
        if change is not None:  # Write and Edit: the client shows the file's diff
            path, (old, new) = change
            content = [tool_diff_content(str(path), new, old)]
        else:
            text = event.output if event.output_type != "image" else "(image)"
            content = [tool_content(text_block(text))] if text else None
        await self.send(update_tool_call(event.call_id, status=status, content=content))

    async def _on_progress(self, event: p.ToolProgressEvent) -> None:
        """An MCP server's progress as the call's content, while it runs."""
        if event.call_id not in self._announced:
            return  # already ended, or never shown
        done = f"{event.progress:g}" + (f"/{event.total:g}" if event.total is not None else "")
        text = f"{done} {event.message}" if event.message else done
        content = [tool_content(text_block(text))]
        await self.send(update_tool_call(event.call_id, status="in_progress", content=content))

    def _forget(self, call_id: str) -> None:
        """A call has ended: nothing more is sent about it."""
        self._args.pop(call_id, None)
        self._announced.discard(call_id)
        self._terminals.discard(call_id)

    async def _on_terminal(self, event: TerminalStarted) -> None:
        call_id = next(
            (
                call_id
                for call_id, args in self._args.items()
                if args.get("command") == event.command and call_id not in self._terminals
            ),
            None,
        )
        if call_id is not None:
            self._terminals.add(call_id)
            content = [tool_terminal_ref(event.terminal_id)]
            await self.send(update_tool_call(call_id, content=content))

    def _change(self, args: dict[str, Any]) -> tuple[Path, tuple[str | None, str]] | None:
        raw = args.get("file_path")
        if self.diffs is None or self.agent is None or not isinstance(raw, str):
            return None
        try:
            path = self.agent.workspace.resolve(raw, "file_path")
        except ToolFailure:
            return None
        change = self.diffs.take(path)
        return (path, change) if change is not None else None

    async def _on_request(self, event: p.ToolRequestEvent) -> None:
        tool = event.tool
        self._announced.add(event.call_id)
        self._args[event.call_id] = tool.args
        workspace = self.agent.settings.workspace if self.agent else None
        where = locations(tool.args, workspace) if workspace else None
        kind = tool_kind(tool.name, tool.category)
        title = tool.description or tool.name
        await self.send(
            start_tool_call(
                event.call_id,
                title,
                kind=kind,
                status="pending",
                locations=where,
                raw_input=tool.args,
            )
        )
        if tool.name in self._rejected:
            await self._decide(event.call_id, "reject_once", REJECTED_ALWAYS)
            return
        call = ToolCallUpdate(
            tool_call_id=event.call_id,
            title=title,
            kind=kind,
            status="pending",
            locations=where,
            raw_input=tool.args,
        )
        task = asyncio.create_task(self._ask(event.call_id, tool.name, call))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _ask(self, call_id: str, name: str, call: ToolCallUpdate) -> None:
        try:
            response = await self.client.request_permission(
                session_id=self.id, tool_call=call, options=OPTIONS
            )
        except Exception as exc:  # no answer is a denial, never a hang
            await self._decide(call_id, "reject_once", f"permission request failed: {exc}")
            return
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            await self._decide(call_id, "reject_once", "Cancelled by the client")
            return
        if outcome.option_id == "reject_always":
            self._rejected.add(name)
        await self._decide(call_id, outcome.option_id, "User denied")

    async def _decide(self, call_id: str, option: str, reason: str) -> None:
        agent = self.agent
        if agent is None or call_id not in agent.pending:  # the turn was cancelled
            return
        command: p.Command
        if option in ("allow_once", "allow_always"):
            scope: Literal["once", "always"] = "always" if option == "allow_always" else "once"
            command = p.ToolApproveCommand(type="tool_approve", call_id=call_id, scope=scope)
        else:
            if option not in ("reject_once", "reject_always"):
                reason = f"unknown permission option {option!r}"
            command = p.ToolDenyCommand(type="tool_deny", call_id=call_id, reason=reason)
        await agent.handle(command)

    async def _on_running(self, event: p.ToolRunningEvent, args: Any) -> None:
        if event.call_id in self._announced:
            await self.send(update_tool_call(event.call_id, status="in_progress"))
            return
        # Approved by the mode or allow-list: the client hears of it now.
        self._announced.add(event.call_id)
        agent = self.agent
        args = args if isinstance(args, dict) else {}
        self._args[event.call_id] = args
        tool = agent.tools.get(event.tool_name) if agent else None
        title, kind = describe(tool, event.tool_name, args)
        where = locations(args, agent.settings.workspace) if agent else None
        await self.send(
            start_tool_call(
                event.call_id,
                title,
                kind=kind,
                status="in_progress",
                locations=where,
                raw_input=args,
            )
        )

    # ---- prompt and cancel -------------------------------------------------------

    async def prompt(self, user: Message, title: str) -> StopReason:
        """Run one turn; its stop reason, or a RequestError if it failed."""
        assert self.agent is not None
        msg_id = uuid.uuid4().hex
        future: asyncio.Future[TurnEnd] = asyncio.get_running_loop().create_future()
        self._turns[msg_id] = future
        self.agent.submit(msg_id, user, title)
        end = await future
        if msg_id in self._cancelled:
            self._cancelled.discard(msg_id)
            return "cancelled"
        if end.error is not None:
            data = {"code": end.error.code, "retryable": end.error.retryable}
            raise RequestError(-32603, end.error.message, data)
        return _STOP.get(end.stop_reason, "end_turn")

    async def cancel(self) -> None:
        """`session/cancel`: the running turn stops, queued prompts end unrun;
        each answers `cancelled`."""
        if self.agent is None:
            return
        self._cancelled.update(self._turns)
        await self.agent.stop()
        for msg_id, future in list(self._turns.items()):
            if msg_id not in self._started and not future.done():
                del self._turns[msg_id]
                future.set_result(TurnEnd("cancelled"))

    async def close(self) -> None:
        """The session ends (`session/load` of its id, end of input): its
        prompts are answered `cancelled`, as for `session/cancel`, not with
        the stop reason the interrupted stream happens to end with."""
        self._cancelled.update(self._turns)
        if self.agent is not None:
            await self.agent.close()
        for extensions in self.closers:
            await extensions.close()
        for task in [*self._asking, self._pump]:
            task.cancel()
        for future in self._turns.values():
            if not future.done():
                future.set_result(TurnEnd("cancelled"))
        self._turns.clear()
