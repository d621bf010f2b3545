"""The agent session: conversation state and dispatch by command type.

The session never reads or writes a stream itself; commands come in through
`handle` and events leave through the `emit` callable it was given, so the
same session runs over stdin/stdout, in memory in tests, or in the terminal
chat. A `message` starts a turn as a task, so `stop`, approvals and other
commands are handled while the turn runs.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections.abc import Callable, Sequence

from flightdeck.agent import _protocol as p
from flightdeck.agent._approval import ApprovalPolicy, Decision
from flightdeck.agent._attachments import AttachmentError, attach
from flightdeck.agent._settings import AgentSettings
from flightdeck.agent._store import Loaded, Session
from flightdeck.agent._turn import Turn, TurnState
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


def normalize(history: Sequence[Message]) -> list[Message]:
    """Merge consecutive messages of the same role (left by a stopped or
    interrupted turn) so every provider accepts the conversation."""
    out: list[Message] = []
    for message in history:
        if out and out[-1].role == message.role:
            out[-1] = Message(message.role, [*out[-1].content, *message.content])
        else:
            out.append(message)
    return out


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
    ) -> None:
        self.settings = settings
        self.provider = provider
        self.emit = emit
        self.tools: dict[str, Tool] = {t.name: t for t in (tools or builtin_tools())}
        self.workspace = Workspace(settings.workspace)
        self.policy = ApprovalPolicy(settings.mode, set(settings.allow_list))
        self.pending: dict[str, tuple[asyncio.Future[Decision], Tool]] = {}
        self.session = session
        loaded = loaded or Loaded()
        self.history: list[Message] = list(loaded.history)
        self.context: list[str] = list(loaded.context)
        self._task: asyncio.Task[None] | None = None
        self._had_message = False
        # the msg_id of the running turn (Spawn labels sub-agent events with it)
        self.current_msg_id: str | None = None
        # the running turn's state (Spawn adds its sub-agents' usage to it)
        self.current_state: TurnState | None = None

    # ---- outward ------------------------------------------------------------

    def ready_event(self) -> p.ReadyEvent:
        # Built without validation (the values are ours and typed): validating
        # would build the models' schemas, ~15 ms before the first line.
        caps = p.Capabilities.model_construct(
            tool_approval=True,
            thinking=self.settings.thinking_budget is not None,
            mcp=False,
        )
        session_id = self.session.id if self.session else None
        return p.ReadyEvent.model_construct(session_id=session_id, capabilities=caps)

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

    def _on_message(self, command: p.MessageCommand) -> None:
        if self.busy:
            self.error(
                command.msg_id,
                "protocol_error",
                "A turn is already running; wait for its stream_end or send stop",
            )
            return
        content: list[ContentBlock] = []
        try:
            attached = [attach(f, self.settings.workspace) for f in command.files]
        except AttachmentError as exc:
            self.error(command.msg_id, "protocol_error", str(exc))
            return
        content.extend(b for b in attached if isinstance(b, ImageBlock))
        content.extend(b for b in attached if isinstance(b, TextBlock))
        content.append(TextBlock(command.text))
        self._had_message = True
        self._write_title(command.text)
        user = Message("user", content)
        self._task = asyncio.create_task(self._run_turn(command.msg_id, user))

    def _on_decision(self, command: p.ToolApproveCommand | p.ToolDenyCommand) -> None:
        entry = self.pending.pop(command.call_id, None)
        if entry is None:
            self.error(
                None,
                "protocol_error",
                f"Unknown call_id: {command.call_id} (no pending tool_request)",
            )
            return
        future, tool = entry
        if isinstance(command, p.ToolApproveCommand):
            if command.scope == "always":
                self.policy.allow.add(tool.category)
            decision = Decision(True)
        else:
            decision = Decision(False, command.reason)
        if not future.done():
            future.set_result(decision)

    def _on_init_history(self, command: p.InitHistoryCommand) -> None:
        if self._had_message:
            self.error(None, "protocol_error", "init_history must come before the first message")
            return
        self.context.append(command.text)
        if self.session is not None:
            self.session.append_context(command.text)

    def _write_title(self, text: str) -> None:
        if self.session is not None and not self.history:
            self.session.write_meta(title=text.strip().splitlines()[0][:80] if text.strip() else "")

    # ---- the turn -------------------------------------------------------------

    async def _run_turn(self, msg_id: str, user: Message) -> None:
        state = TurnState(msg_id)
        turn = Turn(self, state)
        self.current_msg_id = msg_id
        self.current_state = state
        self.emit(p.StreamStartEvent(msg_id=msg_id))
        self.commit([user])
        try:
            await turn.run()
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

    async def stop(self) -> None:
        """Cancel the running turn (model request and tools); it ends with stream_end."""
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def wait_idle(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def close(self) -> None:
        """EOF or SIGTERM: cancel work; every completed step is already saved."""
        await self.stop()
