"""Building one ACP session: an `AgentSession` behind a `Bridge`.

Sessions are built the way the JSON stream builds its one session: settings
from flags and the session's `cwd`, the provider, the session store, then the
extensions (configured MCP servers, manifest tools, Spawn) and the client's
MCP servers for that session. This module imports the engine; `_server`
imports it on the first session method, after `initialize` is answered.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp import Client, RequestError
from acp.schema import (
    ClientCapabilities,
    HttpMcpServer,
    McpServerStdio,
    SessionMode,
    SessionModeState,
    SseMcpServer,
)

from flightdeck.agent.acp._bridge import Bridge
from flightdeck.agent.acp._diffs import Reader, read_disk, record_diffs
from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.engine._setup import (
    SetupError,
    load_settings,
    make_provider,
    open_session,
    sessions_root,
    with_model,
)
from flightdeck.agent.engine._store import Loaded, Session, SessionError, SessionStore
from flightdeck.agent.protocol import _models as p

MODES = [
    SessionMode(id="default", name="Ask", description="Ask before edits and commands"),
    SessionMode(id="auto_edit", name="Auto-edit", description="Edit files without asking"),
    SessionMode(id="yolo", name="Yolo", description="Run every tool without asking"),
]
McpServer = HttpMcpServer | SseMcpServer | McpServerStdio | Any


def config_error(message: str) -> RequestError:
    return RequestError(-32603, message, {"code": "config_error"})


async def open_bridge(
    client: Client,
    capabilities: ClientCapabilities | None,
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    cwd: str,
    load: str | None,
    servers: list[McpServer],
) -> Bridge:
    """A new (or, with `load`, a stored) session in `cwd`, ready for prompts."""
    if not Path(cwd).is_absolute():
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path: {cwd}"})
    flags = {**flags, "workspace": cwd}
    try:
        settings = load_settings(flags, env)
        provider, model = make_provider(settings, env)
        settings = with_model(settings, model)
        stored, loaded = _store(settings, load, model)
    except SetupError as exc:
        raise config_error(str(exc)) from None
    session_id = stored.id if stored is not None else (load or uuid.uuid4().hex)
    bridge = Bridge(client, session_id)
    elicitation = capabilities.elicitation if capabilities else None
    bridge.url_elicitation = elicitation is not None and elicitation.url is not None
    agent = AgentSession(
        settings,
        provider,
        bridge.emit,
        session=stored,
        loaded=loaded,
        provider_factory=lambda changed: make_provider(changed, env)[0],
    )
    bridge.agent = agent
    from flightdeck.agent.extensions._load import add_mcp_servers, attach_extensions

    extensions = await attach_extensions(agent)
    fs = capabilities.fs if capabilities else None
    reader: Reader = read_disk
    if fs is not None and fs.read_text_file and fs.write_text_file:
        from flightdeck.agent.acp._client_fs import ClientFiles, use_client_fs

        files = ClientFiles(client, session_id)
        use_client_fs(agent.tools, files)
        reader = files.read_or_none
    record_diffs(agent.tools, bridge.diffs_for(reader))
    if capabilities is not None and capabilities.terminal and "Bash" in agent.tools:
        from flightdeck.agent.acp._client_terminal import ClientBash

        disk = agent.tools["Bash"]
        agent.tools["Bash"] = ClientBash(disk, client, session_id, bridge.on_terminal)
    bridge.closers.append(extensions)
    for problem in [*loaded.problems, *extensions.problems]:
        print(f"flightdeck agent: {problem}", file=sys.stderr)
    # the client's servers together, under one deadline (the user's [mcp] connect_timeout)
    commands = [c for c in map(_mcp_command, servers) if c is not None]
    if commands:
        await add_mcp_servers(agent, commands)
    from flightdeck.llm import warm

    warm(provider)
    bridge.commands_changed()  # MCP prompts as slash commands
    agent.on_commands_changed = bridge.commands_changed
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
        raise config_error(f"cannot use the session store: {exc}") from None


def modes(agent: AgentSession) -> SessionModeState:
    return SessionModeState(current_mode_id=agent.policy.mode, available_modes=list(MODES))


def set_mode_command(mode_id: str) -> p.SetModeCommand | None:
    """The engine's `set_mode` command, or None for a mode it does not know."""
    if mode_id not in p.MODES:
        return None
    return p.SetModeCommand(type="set_mode", mode=mode_id)


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
