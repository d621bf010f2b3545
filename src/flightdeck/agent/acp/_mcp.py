"""What MCP servers ask of an ACP client: a sign-in URL shown to the person,
and the servers' prompts as the session's slash commands."""

from __future__ import annotations

import asyncio
import sys
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from acp import update_agent_message_text

from flightdeck.agent.protocol import _models as p

if TYPE_CHECKING:
    from acp import Client

    from flightdeck.agent.engine._session import AgentSession


class Bridge(Protocol):
    """The session's bridge (`_bridge.Bridge`) as these functions use it."""

    @property
    def client(self) -> Client: ...
    @property
    def id(self) -> str: ...
    @property
    def agent(self) -> AgentSession | None: ...
    @property
    def url_elicitation(self) -> bool: ...

    async def send(self, update: Any) -> None: ...

    def keep(self, task: asyncio.Task[None]) -> None: ...


async def announce_commands(bridge: Bridge) -> None:
    """An `available_commands_update` with the session's MCP prompts (none: nothing)."""
    from acp.helpers import update_available_commands
    from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

    prompts = list(bridge.agent.mcp_prompts.values()) if bridge.agent is not None else []
    if not prompts:
        return
    commands = [
        AvailableCommand(
            name=c.name,
            description=c.description,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=c.hint)) if c.hint else None,
        )
        for c in prompts
    ]
    await bridge.send(update_available_commands(commands))


async def show_sign_in(bridge: Bridge, event: p.McpAuthRequiredEvent) -> None:
    """An MCP server's sign-in URL: an URL elicitation when the client can
    show one (asked in a task: the answer only says the person was shown it,
    and the bridge's queue must not wait for a person), else, or when the
    client refuses the request, an agent message. Always on stderr too."""
    text = f"MCP server {event.name} needs you to sign in: {event.url}"
    print(f"flightdeck agent: {text}", file=sys.stderr)
    if not bridge.url_elicitation:
        await bridge.send(update_agent_message_text(text + "\n"))
        return
    task = asyncio.create_task(_elicit(bridge, event, text))
    bridge.keep(task)


async def _elicit(bridge: Bridge, event: p.McpAuthRequiredEvent, text: str) -> None:
    from acp.schema import ElicitationUrlSessionMode
    from pydantic import AnyUrl

    mode = ElicitationUrlSessionMode(
        session_id=bridge.id,
        elicitation_id=f"sign_in_{uuid.uuid4().hex[:12]}",
        url=AnyUrl(event.url),
    )
    message = f"MCP server {event.name} needs you to sign in"
    try:
        answer = await bridge.client.create_elicitation(message=message, mode=mode)
    except Exception as exc:
        print(f"flightdeck agent: acp: elicitation failed: {exc}", file=sys.stderr)
        await bridge.send(update_agent_message_text(text + "\n"))
        return
    callback = bridge.agent.sign_ins.pop(event.url, None) if bridge.agent else None
    if callback is None:
        return
    if answer.action != "accept":  # end the sign-in now rather than at its timeout
        callback.refuse(f"in the client ({answer.action})")
        return
    await callback.ended.wait()  # the browser came back: the client may close its view
    try:
        await bridge.client.complete_elicitation(elicitation_id=mode.elicitation_id)
    except Exception as exc:  # a courtesy; the sign-in goes on without it
        print(f"flightdeck agent: acp: elicitation/complete failed: {exc}", file=sys.stderr)
