"""What an MCP server starts, in the session that connected it.

A changed tool list replaces that server's tools in the session's table (the
next model request offers the new ones; a call of a removed one is the
turn's clean `Unknown tool` error). An elicitation is asked like a tool call:
a `tool_request` for `mcp__<server>__elicitation` whose approval accepts (with
the `content` the host sent, if any) and whose denial declines. It is
declined at once when input is closed or no turn is running, withdrawn by
`stop` (the engine's `_withdraw_questions`), and declined if the turn ends
otherwise unanswered. Each answer is audited as `agent.mcp_elicitation`.

A server's prompts are the session's slash commands (`mcp/_prompts.py`): a
message that starts with `/mcp__<server>__<prompt>` is replaced, in its
turn, by the prompt's text; one that cannot be given is the turn's
`protocol_error`, and the model is not called.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any, Literal

from flightdeck.agent.engine._approval import Decision
from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import Category, ToolFailure, ToolOutput, Workspace
from flightdeck.llm import Message, TextBlock

if TYPE_CHECKING:
    from mcp_types import ElicitRequestParams, ElicitResult

    from flightdeck.agent.mcp import McpManager, McpTool
    from flightdeck.agent.mcp._connection import McpConnection

log = logging.getLogger("flightdeck.agent.mcp")


def follow(session: AgentSession, manager: McpManager) -> None:
    """Keep `session.tools` in step with `manager`'s servers and route their
    elicitations to the session's host."""

    def changed(server: str, old: list[McpTool], new: list[McpTool]) -> None:
        for tool in old:
            if session.tools.get(tool.name) is tool:
                del session.tools[tool.name]
        added = [t.name for t in new if session.tools.setdefault(t.name, t) is t]
        message = f"MCP server {server}: tools changed: {', '.join(added) or '(none)'}"
        session.emit(p.InfoEvent(msg_id=None, message=message))

    async def elicit(server: str, params: ElicitRequestParams) -> ElicitResult:
        return await ask(session, server, params)

    from flightdeck.agent.mcp._prompts import commands_of

    def prompts_changed(conn: McpConnection) -> None:
        for name in [n for n, c in session.mcp_prompts.items() if c.connection is conn]:
            del session.mcp_prompts[name]
        added = [
            c.name for c in commands_of(conn) if session.mcp_prompts.setdefault(c.name, c) is c
        ]
        message = f"MCP server {conn.config.name}: prompts changed: {', '.join(added) or '(none)'}"
        session.emit(p.InfoEvent(msg_id=None, message=message))
        if session.on_commands_changed is not None:
            session.on_commands_changed()

    manager.follow(changed, elicit, prompts_changed)
    for conn in manager.connections:
        for command in commands_of(conn):
            session.mcp_prompts.setdefault(command.name, command)


async def expand_prompt(session: AgentSession, msg_id: str, user: Message) -> Message | None:
    """`user` with a prompt command replaced by the prompt's text; unchanged
    when it holds none; None when the prompt failed (reported)."""
    from flightdeck.agent.mcp._prompts import PromptFailed, render, split_command

    for i, block in enumerate(user.content):
        if not isinstance(block, TextBlock):
            continue
        parts = split_command(block.text)
        command = session.mcp_prompts.get(parts[0]) if parts else None
        if parts is None or command is None:
            continue
        try:
            text = await render(command, parts[1])
        except PromptFailed as exc:
            session.error(msg_id, "protocol_error", str(exc))
            return None
        content = [*user.content[:i], TextBlock(text), *user.content[i + 1 :]]
        return Message(user.role, content)
    return user


class Elicitation:
    """Stands in for a tool in the session's pending approvals; never runs."""

    category: Category = "mcp"
    # It asks and runs nothing: `scope: "always"` is not remembered (it must
    # not approve a server tool that happens to be named `elicitation`), and
    # `stop` withdraws it (the turn's cancellation does not reach it).
    asks_only = True
    input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012 - never changed

    def __init__(self, server: str, message: str) -> None:
        from flightdeck.agent.mcp import tool_name

        self.name = tool_name(server, "elicitation")
        self.server = server
        self.description = f"MCP server {server} asks: {message}"

    def summary(self, args: dict[str, Any]) -> str:
        return self.description

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raise ToolFailure("an elicitation is answered, not run")


async def ask(session: AgentSession, server: str, params: ElicitRequestParams) -> ElicitResult:
    from mcp_types import ElicitRequestURLParams, ElicitResult

    args: dict[str, Any] = {"message": params.message, "mode": params.mode}
    if isinstance(params, ElicitRequestURLParams):
        args["url"] = params.url
    else:
        args["requested_schema"] = params.requested_schema
    tool = Elicitation(server, params.message)
    try:
        decision = await _decide(session, tool, args)
    except asyncio.CancelledError:
        # On a 2026-07-28 connection the question is asked inside the call,
        # in the turn's task: `stop` cancels it here. Recorded all the same.
        _record(session, server, params.message, params.mode, "cancel", "stopped")
        raise
    action: Literal["accept", "decline", "cancel"] = "accept" if decision.approved else "decline"
    content = (decision.content or {}) if action == "accept" and params.mode == "form" else None
    try:
        result = ElicitResult(action=action, content=content)
    except ValueError:  # values of types a form cannot hold
        action, result = "decline", ElicitResult(action="decline")
    _record(session, server, params.message, params.mode, action, decision.reason)
    return result


async def _decide(session: AgentSession, tool: Elicitation, args: dict[str, Any]) -> Decision:
    if session.input_closed():
        return Decision(False, "input closed")
    turn = session.turn_task
    if turn is None:  # asked outside a call: no turn to show it in
        return Decision(False, "no turn running")
    call_id = f"elicit_{uuid.uuid4().hex[:12]}"
    future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
    session.pending[call_id] = (future, tool, args)
    info = p.ToolInfo(
        name=tool.name, category=tool.category, args=args, description=tool.description
    )
    session.emit(
        p.ToolRequestEvent(msg_id=session.current_msg_id or "", call_id=call_id, tool=info)
    )
    try:
        waits: set[asyncio.Future[Any]] = {future, turn}
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        session.pending.pop(call_id, None)
    if not future.done():  # the turn ended unanswered (`stop` settles it first)
        session.emit(
            p.ToolCancelledEvent(
                msg_id=session.current_msg_id or "", call_id=call_id, reason="turn ended"
            )
        )
        return Decision(False, "turn ended")
    return future.result()


def _record(
    session: AgentSession, server: str, message: str, mode: str, action: str, reason: str
) -> None:
    """One SQLite row, written in place: it must also happen while the
    question is being cancelled, when nothing can be awaited."""
    from flightdeck.audit import AuditRecord, default_sink

    run_id = session.session.id if session.session is not None else None
    fields = {"server": server, "message": message, "mode": mode, "action": action}
    if reason:
        fields["reason"] = reason
    try:
        default_sink().record(AuditRecord("agent.mcp_elicitation", run_id, fields))
    except Exception as exc:  # an audit store problem must not fail the answer
        log.warning("could not record an elicitation of %s: %s", server, exc)
