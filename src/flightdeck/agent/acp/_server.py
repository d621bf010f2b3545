"""`flightdeck agent --acp`: the agent over the Agent Client Protocol.

The `acp` library reads and writes JSON-RPC and routes each method to the
`FlightdeckAgent` below; each ACP session is an `AgentSession` (the engine the
JSON stream drives) behind a `Bridge`, built by `_sessions`. `initialize`
needs neither: the engine, the providers and the session store are imported
on the first session method, so a client's handshake does not wait for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from acp import (
    PROTOCOL_VERSION,
    AuthenticateResponse,
    Client,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionModeResponse,
)
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    McpCapabilities,
    PromptCapabilities,
)

if TYPE_CHECKING:
    from flightdeck.agent.acp._bridge import Bridge
    from flightdeck.agent.acp._content import PromptBlock
    from flightdeck.agent.acp._sessions import McpServer


class FlightdeckAgent:
    """The ACP `Agent`: one per connection, holding its sessions by id."""

    def __init__(self, flags: Mapping[str, Any], env: Mapping[str, str]) -> None:
        self.flags = dict(flags)
        self.env = env
        self.client: Client | None = None
        self.client_capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, Bridge] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        import asyncio

        from flightdeck import __version__
        from flightdeck.agent._startup import resume_gc

        # Start-up ends when this response is sent, right after this returns.
        asyncio.get_running_loop().call_soon(resume_gc)
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True),
            ),
            agent_info=Implementation(name="flightdeck", title="flightdeck", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        # Credentials come from the environment; there is nothing to sign in to.
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[McpServer] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        from flightdeck.agent.acp._sessions import modes

        bridge = await self._open(cwd, None, mcp_servers or [])
        assert bridge.agent is not None
        return NewSessionResponse(session_id=bridge.id, modes=modes(bridge.agent))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        from flightdeck.agent.acp._content import replay
        from flightdeck.agent.acp._sessions import modes

        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        bridge = await self._open(cwd, session_id, mcp_servers or [])
        agent = bridge.agent
        assert agent is not None
        for update in replay(agent.history, agent.tools, agent.settings.workspace):
            await bridge.send(update)
        agent.resume_pending()  # approvals awaited when the last process ended
        return LoadSessionResponse(modes=modes(agent))

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        from flightdeck.agent.acp._content import PromptError, user_message

        bridge = self._bridge(session_id)
        try:
            user, title = user_message(prompt)
        except PromptError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        return PromptResponse(stop_reason=await bridge.prompt(user, title))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        bridge = self.sessions.get(session_id)
        if bridge is not None:
            await bridge.cancel()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        from flightdeck.agent.acp._sessions import set_mode_command
        from flightdeck.agent.protocol import _models as p

        bridge = self._bridge(session_id)
        command = set_mode_command(mode_id)
        if command is None or bridge.agent is None:
            known = ", ".join(p.MODES)
            raise RequestError.invalid_params({"details": f"unknown mode {mode_id!r} ({known})"})
        await bridge.agent.handle(command)
        return SetSessionModeResponse()

    async def close(self) -> None:
        for bridge in list(self.sessions.values()):
            await bridge.close()
        self.sessions.clear()

    # ---- sessions ------------------------------------------------------------

    def _bridge(self, session_id: str) -> Bridge:
        bridge = self.sessions.get(session_id)
        if bridge is None:
            raise RequestError.invalid_params({"details": f"unknown session {session_id!r}"})
        return bridge

    async def _open(self, cwd: str, load: str | None, servers: list[McpServer]) -> Bridge:
        from flightdeck.agent._startup import resume_gc
        from flightdeck.agent.acp._sessions import open_bridge

        resume_gc()  # a client that skipped `initialize`

        assert self.client is not None
        bridge = await open_bridge(
            self.client, self.client_capabilities, self.flags, self.env, cwd, load, servers
        )
        self.sessions[bridge.id] = bridge
        return bridge
