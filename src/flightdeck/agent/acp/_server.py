"""`flightdeck agent --acp`: the agent over the Agent Client Protocol.

The `acp` library reads and writes JSON-RPC and routes each method to the
`FlightdeckAgent` below; each ACP session is an `AgentSession` (the engine the
JSON stream drives) behind a `Bridge`. Sessions are built the way the JSON
stream builds its one session: settings from flags and the session's `cwd`,
the provider, the session store, then the extensions (configured MCP servers,
manifest tools, Spawn) and the client's MCP servers for that session.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
    HttpMcpServer,
    Implementation,
    McpCapabilities,
    McpServerStdio,
    PromptCapabilities,
    SessionMode,
    SessionModeState,
    SseMcpServer,
)

from flightdeck.agent import _protocol as p
from flightdeck.agent._app import (
    SetupError,
    _with_model,
    load_settings,
    make_provider,
    open_session,
    sessions_root,
)
from flightdeck.agent._engine import AgentSession
from flightdeck.agent._store import Loaded, Session, SessionError, SessionStore
from flightdeck.agent.acp._bridge import Bridge
from flightdeck.agent.acp._content import PromptBlock, PromptError, replay, user_message
from flightdeck.agent.acp._diffs import Reader, read_disk, record_diffs

MODES = [
    SessionMode(id="default", name="Ask", description="Ask before edits and commands"),
    SessionMode(id="auto_edit", name="Auto-edit", description="Edit files without asking"),
    SessionMode(id="yolo", name="Yolo", description="Run every tool without asking"),
]
McpServer = HttpMcpServer | SseMcpServer | McpServerStdio | Any


def _config_error(message: str) -> RequestError:
    return RequestError(-32603, message, {"code": "config_error"})


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
        from flightdeck import __version__

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
        bridge = await self._open(cwd, None, mcp_servers or [])
        assert bridge.agent is not None
        return NewSessionResponse(session_id=bridge.id, modes=_modes(bridge.agent))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        bridge = await self._open(cwd, session_id, mcp_servers or [])
        agent = bridge.agent
        assert agent is not None
        for update in replay(agent.history, agent.tools, agent.settings.workspace):
            await bridge.send(update)
        agent.resume_pending()  # approvals awaited when the last process ended
        return LoadSessionResponse(modes=_modes(agent))

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
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
        bridge = self._bridge(session_id)
        if mode_id not in p.MODES or bridge.agent is None:
            known = ", ".join(p.MODES)
            raise RequestError.invalid_params({"details": f"unknown mode {mode_id!r} ({known})"})
        await bridge.agent.handle(p.SetModeCommand(type="set_mode", mode=mode_id))
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
        assert self.client is not None
        if not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"details": f"cwd must be an absolute path: {cwd}"})
        flags = {**self.flags, "workspace": cwd}
        try:
            settings = load_settings(flags, self.env)
            provider, model = make_provider(settings, self.env)
            settings = _with_model(settings, model)
            stored, loaded = _store(settings, load, model)
        except SetupError as exc:
            raise _config_error(str(exc)) from None
        session_id = stored.id if stored is not None else (load or uuid.uuid4().hex)
        bridge = Bridge(self.client, session_id)
        elicitation = self.client_capabilities.elicitation if self.client_capabilities else None
        bridge.url_elicitation = elicitation is not None and elicitation.url is not None
        env = self.env
        agent = AgentSession(
            settings,
            provider,
            bridge.emit,
            session=stored,
            loaded=loaded,
            provider_factory=lambda changed: make_provider(changed, env)[0],
        )
        bridge.agent = agent
        from flightdeck.agent._extensions import add_mcp_server, attach_extensions

        extensions = await attach_extensions(agent)
        fs = self.client_capabilities.fs if self.client_capabilities else None
        reader: Reader = read_disk
        if fs is not None and fs.read_text_file and fs.write_text_file:
            from flightdeck.agent.acp._client_fs import ClientFiles, use_client_fs

            files = ClientFiles(self.client, session_id)
            use_client_fs(agent.tools, files)
            reader = files.read_or_none
        record_diffs(agent.tools, bridge.diffs_for(reader))
        caps = self.client_capabilities
        if caps is not None and caps.terminal and "Bash" in agent.tools:
            from flightdeck.agent.acp._client_terminal import ClientBash

            disk = agent.tools["Bash"]
            agent.tools["Bash"] = ClientBash(disk, self.client, session_id, bridge.on_terminal)
        bridge.closers.append(extensions)
        for problem in [*loaded.problems, *extensions.problems]:
            print(f"flightdeck agent: {problem}", file=sys.stderr)
        for server in servers:
            command = _mcp_command(server)
            if command is not None:
                await add_mcp_server(agent, command)
        from flightdeck.llm import warm

        warm(provider)
        bridge.commands_changed()  # MCP prompts as slash commands
        agent.on_commands_changed = bridge.commands_changed
        self.sessions[session_id] = bridge
        return bridge


def _store(settings: Any, load: str | None, model: str) -> tuple[Session | None, Loaded]:
    if load is None:
        return open_session(settings, None, None, model)
    if not settings.sessions:
        raise RequestError.invalid_params(
            {"details": "sessions are disabled in the configuration ([agent] sessions)"}
        )
    try:
        session = SessionStore(sessions_root()).open(load)
        return session, session.load(repair=True)
    except SessionError as exc:
        raise RequestError.resource_not_found(load) from exc
    except OSError as exc:
        raise _config_error(f"cannot use the session store: {exc}") from None


def _modes(agent: AgentSession) -> SessionModeState:
    return SessionModeState(current_mode_id=agent.policy.mode, available_modes=list(MODES))


def _mcp_command(server: McpServer) -> p.AddMcpServerCommand | None:
    """A client's MCP server as the engine's `add_mcp_server` command."""
    if isinstance(server, McpServerStdio):
        return p.AddMcpServerCommand(
            type="add_mcp_server",
            name=server.name,
            transport="stdio",
            command=server.command,
            args=list(server.args),
            env={v.name: v.value for v in server.env},
        )
    if isinstance(server, HttpMcpServer | SseMcpServer):
        return p.AddMcpServerCommand(
            type="add_mcp_server",
            name=server.name,
            transport="http" if isinstance(server, HttpMcpServer) else "sse",
            url=server.url,
            headers={h.name: h.value for h in server.headers},
        )
    print(f"flightdeck agent: MCP server of an unsupported kind: {server!r}", file=sys.stderr)
    return None
