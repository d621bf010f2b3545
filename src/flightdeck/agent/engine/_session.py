"""The agent session: conversation state and dispatch by command type.

The session never reads or writes a stream itself; commands come in through
`handle` and events leave through the `emit` callable it was given, so the
same session runs over stdin/stdout, in memory in tests, or in the terminal
chat. A `message` starts a turn as a task, so `stop`, approvals and other
commands are handled while the turn runs. What it asks of the extensions
goes through the `Extension` registered on it (`_extension.py`).
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from flightdeck.agent.engine import _live_config as live
from flightdeck.agent.engine._approval import CLOSED_INPUT, ApprovalPolicy, Decision
from flightdeck.agent.engine._attachments import AttachmentError, attach
from flightdeck.agent.engine._compaction import normalize
from flightdeck.agent.engine._extension import Extension
from flightdeck.agent.engine._settings import AgentSettings
from flightdeck.agent.engine._state import TurnState
from flightdeck.agent.engine._store import Loaded, Session
from flightdeck.agent.engine._turn import STOPPED, Turn
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import Tool, Workspace, builtin_tools
from flightdeck.llm import (
    ContentBlock,
    ImageBlock,
    Message,
    Provider,
    Request,
    TextBlock,
    ToolSpec,
)

Emit = Callable[[p.Event], None]
ProviderFactory = Callable[[AgentSettings], Provider]


class AgentSession:
    def __init__(
        self,
        settings: AgentSettings,
        provider: Provider,
        emit: Emit,
        *,
        tools: Sequence[Tool] | None = None,
        session: Session | None = None,
        loaded: Loaded | None = None,
        provider_factory: ProviderFactory | None = None,
    ) -> None:
        self.settings = settings
        self.provider = provider
        self.emit = emit
        self.tools: dict[str, Tool] = {t.name: t for t in (tools or builtin_tools())}
        self.workspace = Workspace(settings.workspace, sandbox=settings.sandbox)
        self.policy = ApprovalPolicy(settings.mode, set(settings.allow_list))
        # call_id -> (decision, tool, the call's arguments as shown to the client)
        self.pending: dict[str, tuple[asyncio.Future[Decision], Tool, dict[str, Any]]] = {}
        self.session = session
        loaded = loaded or Loaded()
        self.history: list[Message] = list(loaded.history)
        self.context: list[str] = list(loaded.context)
        self._resumable = loaded.pending
        self._task: asyncio.Task[None] | None = None
        self._had_message = False
        # messages received while a turn ran, run in order after it
        self._queue: deque[tuple[str, Message]] = deque()
        self._input_closed = False
        # set_config: what the next turn uses, and how to rebuild the provider
        self.live = live.initial(settings)
        self._pending_config: live.Update | None = None
        self._provider_factory = provider_factory
        # what the session asks of its extensions (`_extension.py`); set by the app
        self.extension: Extension | None = None
        # MCP servers' prompts as slash commands, by name (filled by the extension)
        self.mcp_prompts: dict[str, Any] = {}
        self.on_commands_changed: Callable[[], None] | None = None  # ACP re-announces them
        # MCP sign-in URL -> its loopback callback (`refuse`, `ended`), for ACP
        self.sign_ins: dict[str, Any] = {}
        # the msg_id of the running turn (Spawn labels sub-agent events with it)
        self.current_msg_id: str | None = None
        # the running turn's state (Spawn adds its sub-agents' usage to it)
        self.current_state: TurnState | None = None

    # ---- outward ------------------------------------------------------------

    def capabilities(self) -> p.Capabilities:
        has_mcp = any(t.category == "mcp" for t in self.tools.values())
        return live.capabilities(self.settings, self.live, self.policy.mode, has_mcp)

    def ready_event(self) -> p.ReadyEvent:
        caps = self.capabilities()
        session_id = self.session.id if self.session else None
        return p.ReadyEvent(session_id=session_id, capabilities=caps)

    def error(
        self, msg_id: str | None, code: p.ErrorCode, message: str, *, retryable: bool = False
    ) -> None:
        info = p.ErrorInfo(code=code, message=message, retryable=retryable)
        self.emit(p.ErrorEvent(msg_id=msg_id, error=info))

    def commit(self, messages: list[Message]) -> None:
        """End of a step: keep the messages and put them on disk."""
        self.history.extend(messages)
        if self.session is not None and messages:
            try:
                self.session.append_messages(messages)
            except OSError as exc:
                self.error(None, "internal_error", f"could not save the session: {exc}")

    def persist_pending(self, msg_id: str, reply: Message) -> None:
        """Tools of `reply` wait for approval: record it so a resume re-asks."""
        if self.session is not None:
            try:
                self.session.record_pending(msg_id, reply)
            except OSError as exc:
                self.error(None, "internal_error", f"could not save the session: {exc}")

    def resume_pending(self) -> None:
        """After `ready` of a resumed session: a reply whose approvals were
        awaited when the process ended is settled again (its tool_requests
        are sent again) in a turn under its original msg_id."""
        pending, self._resumable = self._resumable, None
        if pending is not None and not self.busy:
            self._had_message = True
            self._task = asyncio.create_task(self._run_turn(pending[0], None, pending[1]))

    def persist_compaction(self) -> None:
        """Compaction changed the history: record it so a resume continues from it."""
        if self.session is not None:
            try:
                self.session.record_compaction(self.history)
            except OSError as exc:
                self.error(None, "internal_error", f"could not save the session: {exc}")

    def build_request(self) -> Request:
        system = self.settings.system()
        for text in self.context:
            system += f"\n\n<previous_conversation>\n{text}\n</previous_conversation>"
        specs = [ToolSpec(t.name, t.description, dict(t.input_schema)) for t in self.tools.values()]
        return Request(
            model=self.settings.model or "",
            messages=normalize(self.history),
            system=system,
            tools=specs,
            max_tokens=self.settings.max_tokens,
            thinking_budget=self.settings.thinking_budget,
        )

    @property
    def turn_task(self) -> asyncio.Task[None] | None:
        """The running turn, if any (an MCP elicitation ends with it)."""
        return self._task if self.busy else None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    # ---- dispatch -----------------------------------------------------------

    async def handle(self, command: p.Command | p.ProtocolProblem) -> None:
        """Act on one command. Never raises for bad input; reports it instead."""
        if isinstance(command, p.ProtocolProblem):
            self.error(command.msg_id, "protocol_error", command.message)
        elif isinstance(command, p.MessageCommand):
            self._on_message(command)
        elif isinstance(command, p.StopCommand):
            await self.stop()
        elif isinstance(command, p.ToolApproveCommand | p.ToolDenyCommand):
            self._on_decision(command)
        elif isinstance(command, p.InitHistoryCommand):
            self._on_init_history(command)
        elif isinstance(command, p.SetModeCommand):
            self.policy.mode = command.mode
            self._config_changed()
        elif isinstance(command, p.PingCommand):
            self.emit(p.PongEvent())
        elif isinstance(command, p.SetConfigCommand):
            self._on_set_config(command)
        elif isinstance(command, p.AddMcpServerCommand):
            await self._on_add_mcp_server(command)

    def _on_message(self, command: p.MessageCommand) -> None:
        content: list[ContentBlock] = []
        images = self.live.image_input != "unsupported"
        try:
            attached = [attach(f, self.settings.workspace, images=images) for f in command.files]
        except AttachmentError as exc:
            self.error(command.msg_id, "protocol_error", str(exc))
            return
        content.extend(b for b in attached if isinstance(b, ImageBlock))
        content.extend(b for b in attached if isinstance(b, TextBlock))
        content.append(TextBlock(command.text))
        self.submit(command.msg_id, Message("user", content), command.text)

    def submit(self, msg_id: str, user: Message, title: str) -> None:
        """Run a turn for `user` now, or after the running and queued ones.
        `title` names a new session. Transports other than the JSON stream
        (ACP) build the user message themselves and enter here."""
        self._had_message = True
        if self.busy or self._queue:
            self._queue.append((msg_id, user))
            self.emit(
                p.InfoEvent(
                    msg_id=msg_id,
                    message="A turn is running; this message is queued and runs next.",
                )
            )
            return
        self._write_title(title)
        self._task = asyncio.create_task(self._run_turn(msg_id, user))

    def _on_decision(self, command: p.ToolApproveCommand | p.ToolDenyCommand) -> None:
        entry = self.pending.pop(command.call_id, None)
        if entry is None:
            self.error(
                None,
                "protocol_error",
                f"Unknown call_id: {command.call_id} (no pending tool_request)",
            )
            return
        future, tool, args = entry
        if isinstance(command, p.ToolApproveCommand):
            # an MCP elicitation asks a person each time; nothing to remember
            if command.scope == "always" and not getattr(tool, "asks_only", False):
                self.policy.always_allow(tool.name, tool.category, args)
            decision = Decision(True, content=command.content)
        else:
            decision = Decision(False, command.reason)
        if not future.done():
            future.set_result(decision)

    def _on_init_history(self, command: p.InitHistoryCommand) -> None:
        # After a message too (AionUi sends it before each stop): the text is
        # context for the turns that follow, never an error.
        self.context.append(command.text)
        if self.session is not None:
            self.session.append_context(command.text)

    def _write_title(self, text: str) -> None:
        if self.session is not None and not self.history:
            self.session.write_meta(title=text.strip().splitlines()[0][:80] if text.strip() else "")

    # ---- aionrs's configuration commands ----------------------------------------

    def _config_changed(self) -> None:
        config = live.effective(self._next_settings(), self._next_live())
        self.emit(p.ConfigChangedEvent(capabilities=self._next_capabilities(), config=config))

    def _next_settings(self) -> AgentSettings:
        return self._pending_config.settings if self._pending_config else self.settings

    def _next_live(self) -> live.LiveConfig:
        return self._pending_config.live if self._pending_config else self.live

    def _next_capabilities(self) -> p.Capabilities:
        from flightdeck.agent.tools import sandbox_state

        has_mcp = any(t.category == "mcp" for t in self.tools.values())
        caps = live.capabilities(
            self._next_settings(), self._next_live(), self.policy.mode, has_mcp
        )
        # The same sandbox word `ready` gave (the probe is cached by then), so a
        # host that replaces its capabilities with these loses nothing.
        sandbox, _ = sandbox_state(self.settings.sandbox)
        return msgspec.structs.replace(caps, sandbox=sandbox)

    def _on_set_config(self, command: p.SetConfigCommand) -> None:
        base = self._pending_config
        update = live.apply(self._next_settings(), self._next_live(), command)
        if base is not None:  # two updates before a turn: rebuild if either needs it
            update = live.Update(
                update.settings, update.live, update.changes, update.rebuild or base.rebuild
            )
        self._pending_config = update
        if update.changes:
            when = "from the next turn" if self.busy else "now"
            message = f"config updated ({when}): {', '.join(update.changes)}"
        else:
            message = "set_config: no changes"
        self.emit(p.InfoEvent(msg_id=None, message=message))
        if not self.busy:
            self._apply_pending_config()
        self._config_changed()

    def _apply_pending_config(self) -> None:
        update, self._pending_config = self._pending_config, None
        if update is None:
            return
        if update.rebuild and self._provider_factory is not None:
            try:
                self.provider = self._provider_factory(update.settings)
            except Exception as exc:  # a bad option must not end the session
                self.emit(p.InfoEvent(msg_id=None, message=f"effort not applied: {exc}"))
                return
        self.settings, self.live = update.settings, update.live

    async def _on_add_mcp_server(self, command: p.AddMcpServerCommand) -> None:
        if self._had_message:
            self.error(
                None,
                "protocol_error",
                f"add_mcp_server {command.name}: only accepted before the first message",
            )
            return
        if self.extension is None:
            message = f"MCP server {command.name} unavailable: no extensions in this session"
            self.emit(p.InfoEvent(msg_id=None, message=message))
            return
        await self.extension.add_server(command)

    # ---- the turn -------------------------------------------------------------

    async def _run_turn(
        self, msg_id: str, user: Message | None, pending: Message | None = None
    ) -> None:
        self._apply_pending_config()
        state = TurnState(msg_id)
        turn = Turn(self, state)
        self.current_msg_id = msg_id
        self.current_state = state
        self.emit(p.StreamStartEvent(msg_id=msg_id))
        try:
            if user is not None and self.mcp_prompts and self.extension is not None:
                # an MCP prompt command becomes its text; None: it failed (reported)
                expanded = await self.extension.expand_prompt(msg_id, user)
            else:
                expanded = user
            if expanded is not None:
                self.commit([expanded])
            if expanded is not None or user is None:
                await turn.run(pending)
        except asyncio.CancelledError:
            self.commit(turn.interrupted())
        except Exception as exc:  # a bug must end the turn, not the process
            traceback.print_exc(file=sys.stderr)  # diagnostics go to stderr
            self.error(msg_id, "internal_error", f"{type(exc).__name__}: {exc}")
        usage = p.UsageInfo(
            input_tokens=state.usage.input_tokens,
            output_tokens=state.usage.output_tokens,
            cache_read_tokens=state.usage.cache_read_tokens,
            cache_write_tokens=state.usage.cache_write_tokens,
        )
        self.emit(p.StreamEndEvent(msg_id=msg_id, usage=usage))
        if self._queue:  # the next queued message runs as its own task
            self._task = asyncio.create_task(self._run_turn(*self._queue.popleft()))

    def input_closed(self) -> bool:
        """True once the client closed stdin: new approvals are denied at once."""
        return self._input_closed

    async def stop(self) -> None:
        """Cancel the running turn (model request and tools); it ends with
        stream_end. Messages queued behind it are dropped, each with an info."""
        while self._queue:
            msg_id, _ = self._queue.popleft()
            self.emit(p.InfoEvent(msg_id=msg_id, message="Dropped by stop; not run."))
        task = self._task
        if task is None or task.done():
            return
        self._withdraw_questions()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def _withdraw_questions(self) -> None:
        """Pending MCP elicitations are not the turn's tool calls, so its
        cancellation does not reach them: withdraw them here, before the
        turn's `stream_end`."""
        for call_id, (future, tool, _args) in list(self.pending.items()):
            if getattr(tool, "asks_only", False) and not future.done():
                msg_id = self.current_msg_id or ""
                self.emit(p.ToolCancelledEvent(msg_id=msg_id, call_id=call_id, reason=STOPPED))
                future.set_result(Decision(False, STOPPED))

    async def wait_idle(self) -> None:
        """Until the running turn and every queued one have ended."""
        while self._task is not None and not self._task.done():
            await asyncio.gather(self._task, return_exceptions=True)

    async def finish_input(self) -> None:
        """End of input: pending approvals are denied, the running and queued
        turns finish (their later approvals are denied too)."""
        self._input_closed = True
        for future, _tool, _args in list(self.pending.values()):
            if not future.done():
                future.set_result(Decision(False, CLOSED_INPUT))
        await self.wait_idle()

    async def close(self) -> None:
        """EOF or SIGTERM: cancel work; every completed step is already saved."""
        await self.stop()
        if self.extension is not None:
            await self.extension.close()
