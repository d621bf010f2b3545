"""What a turn works with: its own state (`TurnState`) and the session as
the turn and compaction see it (`TurnHost`).

`AgentSession` is a `TurnHost`, and so is a `Spawn` sub-agent (a session
whose tool flow goes through its parent's): the turn (`_turn.py`) and
compaction (`_compaction.py`) are written against this interface, not the
session's class, so neither imports the session that runs them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from flightdeck.llm import Message, ToolResultBlock, Usage

if TYPE_CHECKING:
    from flightdeck.agent.engine._approval import ApprovalPolicy, Decision
    from flightdeck.agent.engine._settings import AgentSettings
    from flightdeck.agent.protocol._models import ErrorCode, Event
    from flightdeck.agent.tools import Tool, Workspace
    from flightdeck.llm import Provider, Request


class TurnState(msgspec.Struct):
    msg_id: str
    usage: Usage = msgspec.field(default_factory=Usage)
    partial_text: list[str] = msgspec.field(default_factory=list)
    # the reply whose tools are being settled, and the results so far
    reply: Message | None = None
    results: dict[str, ToolResultBlock] = msgspec.field(default_factory=dict)
    # why the turn ended, for transports that report it (ACP's stopReason):
    # the last model reply's stop reason, or "max_turns"
    stop_reason: str = "end_turn"


class TurnHost(Protocol):
    """The session a turn runs in: its settings, provider, tools, approvals
    and history, where events go, and what it keeps on disk."""

    @property
    def settings(self) -> AgentSettings: ...
    @property
    def provider(self) -> Provider: ...
    @property
    def emit(self) -> Callable[[Event], None]: ...
    @property
    def tools(self) -> dict[str, Tool]: ...
    @property
    def policy(self) -> ApprovalPolicy: ...
    @property
    def workspace(self) -> Workspace: ...
    @property
    def history(self) -> list[Message]: ...

    # call_id -> (decision, tool, the call's arguments as shown to the client)
    @property
    def pending(self) -> dict[str, tuple[asyncio.Future[Decision], Tool, dict[str, Any]]]: ...

    def build_request(self) -> Request: ...

    def commit(self, messages: list[Message]) -> None: ...

    def error(
        self, msg_id: str | None, code: ErrorCode, message: str, *, retryable: bool = False
    ) -> None: ...

    def input_closed(self) -> bool: ...

    def persist_pending(self, msg_id: str, reply: Message) -> None: ...

    def persist_compaction(self) -> None: ...
