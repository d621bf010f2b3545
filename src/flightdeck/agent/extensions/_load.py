"""The tools beyond the built-in ones (agent part 2), loaded at start-up:
MCP servers' tools, the workspace's manifest tools and `Spawn`.

`load_extensions` returns them with where each comes from; the app adds them
to the session (`attach_extensions`, which also registers the session's
`SessionExtension`: the engine's `Extension`), decorates
`ready.capabilities` with what was loaded, reports each problem with `info`,
and closes the MCP connections on shutdown. Nothing here is imported, and no
MCP SDK is loaded, unless the agent starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.engine._settings import AgentSettings
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import Tool

if TYPE_CHECKING:
    from flightdeck.agent.extensions._manifest_tools import ManifestTools
    from flightdeck.agent.mcp import McpConfig, McpManager, McpServerConfig
    from flightdeck.agent.mcp._auth import SignIn
    from flightdeck.agent.mcp._auth_callback import Callback
    from flightdeck.audit import AuditSink
    from flightdeck.config import Trust
    from flightdeck.llm import Message


class Extensions(msgspec.Struct):
    tools: list[Tool] = msgspec.field(default_factory=list)
    # tool name -> where it comes from (MCP server, manifest file)
    sources: dict[str, str] = msgspec.field(default_factory=dict)
    mcp: McpManager | None = None
    problems: list[str] = msgspec.field(default_factory=list)

    def add(self, tool: Tool, source: str) -> None:
        self.tools.append(tool)
        self.sources[tool.name] = source

    def decorate(self, ready: p.ReadyEvent) -> p.ReadyEvent:
        """`ready` with honest `capabilities.mcp` and what was loaded from where."""
        update: dict[str, Any] = {"mcp": self.mcp is not None and self.mcp.available}
        if self.mcp is not None and self.mcp.statuses:
            update["mcp_servers"] = {
                s.name: p.McpServerInfo(
                    transport="http" if s.transport == "http" else "stdio",
                    where=s.where,
                    connected=s.connected,
                    tools=list(s.tools),
                    error=s.error,
                    error_code=s.code,
                    prompts=list(s.prompts),
                )
                for s in self.mcp.statuses
            }
        if self.sources:
            update["tools"] = dict(self.sources)
        caps = msgspec.structs.replace(ready.capabilities, **update)
        return msgspec.structs.replace(ready, capabilities=caps)

    async def close(self) -> None:
        if self.mcp is not None:
            await self.mcp.close()


async def load_extensions(
    settings: AgentSettings,
    config: Mapping[str, Any],
    *,
    run_id: str | None = None,
    audit: AuditSink | None = None,
    sign_in: SignIn | None = None,
    workspace_layer: Mapping[str, Any] | None = None,
    trust: Trust | None = None,
) -> Extensions:
    """Connect the configured MCP servers (concurrently, under one deadline)
    while the workspace's manifest tools are discovered, and collect every
    extension tool. Never raises for bad config or a broken manifest: each
    problem is a line in `problems`. `sign_in` shows an MCP server's OAuth
    sign-in URL to a person (none: such a server is a problem).

    What the workspace's own files name (`workspace_layer`'s MCP servers, the
    `.drivers/` SDK drivers) starts only when `trust` (default: decided from
    the user's config and `settings.trust_workspace`) says the workspace is
    trusted; otherwise one problem names what was held back (and the settings
    of its files that were ignored, `settings.ignored_settings`) and how to
    trust."""
    from flightdeck.config import decide_trust, trust_notice

    ext = Extensions()
    held: list[str] = []
    workspace = settings.workspace
    drivers = (workspace / ".drivers").is_dir()
    mcp_config = None
    if "mcp" in config:  # the MCP modules (and later the SDK) only when configured
        from flightdeck.agent.mcp import parse_mcp_config

        mcp_config = parse_mcp_config(config, workspace_layer)
        ext.problems.extend(mcp_config.problems)
    wanted = mcp_config is not None and any(s.origin == "workspace" for s in mcp_config.servers)
    ignored = settings.ignored_settings
    if trust is None and (drivers or wanted or ignored):
        trust = decide_trust(workspace, host=settings.trust_workspace)
    trusted = trust is not None and trust.trusted
    if trust is not None and trust.problem:
        ext.problems.append(trust.problem)
    manifests = None
    if drivers and trusted:  # else no workspace code is imported
        manifests = asyncio.create_task(
            asyncio.to_thread(_manifest_tools, workspace, run_id, audit)
        )
    elif drivers:
        held.append(_drivers_line(workspace))
    if mcp_config is not None and mcp_config.servers:
        from flightdeck.agent.mcp import McpManager, connect_servers

        servers = [s for s in mcp_config.servers if trusted or s.origin != "workspace"]
        kept = [s for s in mcp_config.servers if s not in servers]
        held += [_server_line(s) for s in kept]
        ext.mcp = McpManager()
        if servers:
            started = dataclasses.replace(mcp_config, servers=tuple(servers))
            ext.mcp = await connect_servers(started, workspace, sign_in)
        ext.mcp.hold(kept)
        ext.problems.extend(ext.mcp.problems())
        for tool in ext.mcp.tools:
            ext.add(tool, tool.source)
    if held or ignored:
        ext.problems.append(trust_notice(workspace, held, ignored))
    if manifests is None:
        return ext
    found = await manifests
    ext.problems.extend(found.problems)
    for manifest in found.tools:
        if manifest.name in ext.sources:
            ext.problems.append(f"tool {manifest.contract.id}: name {manifest.name} is taken")
            continue
        ext.add(manifest, manifest.source)
    return ext


def _server_line(server: McpServerConfig) -> str:
    return f"MCP server {server.name} ({server.where})"


def _drivers_line(workspace: Path) -> str:
    return f"the SDK drivers in {workspace / '.drivers'} (Python code)"


def workspace_starts(workspace: Path, *, host: bool = False) -> tuple[list[str], list[str]]:
    """What the workspace's own files would start or import, and the keys of
    them that would be ignored (nothing when it is trusted): for a person
    asked, before the agent starts, whether to trust it. `host`: the host's
    `--trust-workspace`."""
    from flightdeck.agent.engine._setup import settings_data
    from flightdeck.config import ConfigError, decide_trust, load_config

    if decide_trust(workspace, host=host).trusted:
        return [], []
    try:
        loaded = load_config(workspace)
    except ConfigError:  # reported by the settings
        return [], []
    lines = []
    if "mcp" in loaded.project:
        from flightdeck.agent.mcp import parse_mcp_config

        servers = parse_mcp_config(loaded.data, loaded.project).servers
        lines += [_server_line(s) for s in servers if s.origin == "workspace"]
    if (workspace / ".drivers").is_dir():
        lines.append(_drivers_line(workspace))
    return lines, list(settings_data(loaded, workspace, host=host)[1])


def _manifest_tools(workspace: Path, run_id: str | None, audit: AuditSink | None) -> ManifestTools:
    from flightdeck.agent.extensions._manifest_tools import discover_manifest_tools

    if audit is None:
        from flightdeck.audit import default_sink

        audit = default_sink()
    return discover_manifest_tools(workspace, audit=audit, run_id=run_id)


async def attach_extensions(session: AgentSession, trust: Trust | None = None) -> Extensions:
    """Load the extensions for a session's workspace and add their tools to it
    after `Spawn` (a built-in tool keeps its name). `trust`: a person's answer
    (the terminal chat asks); default: the user's config and the host's flag."""
    from flightdeck.config import Config, ConfigError, load_config

    try:
        loaded = load_config(session.settings.workspace)
    except ConfigError as exc:  # already reported by the settings; keep going
        loaded = Config()
        problems = [str(exc)]
    else:
        problems = []
    run_id = session.session.id if session.session is not None else None
    ext = await load_extensions(
        session.settings,
        loaded.data,
        run_id=run_id,
        sign_in=sign_in_through(session),
        workspace_layer=loaded.project,
        trust=trust,
    )
    ext.problems[:0] = problems
    registered(session)  # what the engine asks of the extensions from now on
    from flightdeck.agent.extensions._spawn import SpawnTool

    session.tools.setdefault(SpawnTool.name, SpawnTool(session))
    for tool in ext.tools:
        session.tools.setdefault(tool.name, tool)
    if ext.mcp is not None:
        from flightdeck.agent.extensions._mcp_session import follow

        follow(session, ext.mcp)
    return ext


def sign_in_through(session: AgentSession) -> SignIn:
    """Show a sign-in URL to the session's host: a `mcp_auth_required` event
    (over ACP the bridge turns it into what the client can show)."""

    def sign_in(server: str, url: str, callback: Callback) -> None:
        session.sign_ins[url] = callback  # an ACP client may decline it, or hear it ended
        session.emit(p.McpAuthRequiredEvent(name=server, url=url))

    return sign_in


async def list_tools(flags: Mapping[str, Any]) -> dict[str, Any]:
    """What `flightdeck agent --list-tools` reports: every tool the agent would
    offer (built-in, Spawn, MCP, manifest) with its category, whether it always
    asks, and where it comes from; the MCP servers; the problems. Needs no
    provider credentials. Raises `SetupError` for a bad configuration."""
    import os

    from flightdeck.agent.engine._setup import load_settings
    from flightdeck.agent.tools import builtin_tools

    settings = load_settings(flags, os.environ)
    from flightdeck.config import load_config

    loaded = load_config(settings.workspace)
    ext = await load_extensions(settings, loaded.data, workspace_layer=loaded.project)
    try:
        rows = [_row(t, "builtin") for t in builtin_tools()]
        rows.append({"name": "Spawn", "category": "exec", "always_ask": False, "source": "builtin"})
        rows += [_row(t, ext.sources[t.name]) for t in ext.tools]
        ready = ext.decorate(
            p.ReadyEvent(capabilities=p.Capabilities(tool_approval=True, thinking=False, mcp=False))
        )
        servers = ready.capabilities.mcp_servers or {}
        return {
            "workspace": str(settings.workspace),
            "tools": rows,
            "mcp_servers": {k: p.mcp_server_data(v) for k, v in servers.items()},
            "problems": list(ext.problems),
        }
    finally:
        await ext.close()


def _row(tool: Tool, source: str) -> dict[str, Any]:
    return {
        "name": tool.name,
        "category": tool.category,
        "always_ask": bool(getattr(tool, "always_ask", False)),
        "source": source,
    }


async def add_mcp_server(session: AgentSession, command: p.AddMcpServerCommand) -> None:
    """aionrs's `add_mcp_server`: connect one more server before the first
    message, offer its tools, and answer with `mcp_ready` (or an `info`
    naming the failure)."""
    await add_mcp_servers(session, [command])


async def add_mcp_servers(session: AgentSession, commands: list[p.AddMcpServerCommand]) -> None:
    """Connect servers the host gave (trusted: the host's choice) together,
    under one deadline: the user's `[mcp] connect_timeout` (and
    `sign_in_timeout`), as for configured servers. Each connected server is
    answered with `mcp_ready`, each failure with an `info`."""
    from flightdeck.agent.mcp import McpServerConfig, connect_servers

    servers: list[McpServerConfig] = []
    for command in commands:
        if command.transport == "stdio" and not command.command:
            message = f"MCP server {command.name} unavailable: stdio needs a command"
            session.emit(p.InfoEvent(msg_id=None, message=message))
            continue
        if command.transport != "stdio" and not command.url:
            message = f"MCP server {command.name} unavailable: {command.transport} needs a url"
            session.emit(p.InfoEvent(msg_id=None, message=message))
            continue
        servers.append(
            McpServerConfig(
                name=command.name,
                command=command.command if command.transport == "stdio" else None,
                args=tuple(command.args or ()),
                env=dict(command.env or {}),
                url=command.url if command.transport != "stdio" else None,
                headers=dict(command.headers or {}),
                origin="host",
            )
        )
    if not servers:
        return
    settings = _mcp_settings(session)
    config = dataclasses.replace(settings, servers=tuple(servers), problems=())
    manager = await connect_servers(config, session.settings.workspace, sign_in_through(session))
    registered(session).managers.append(manager)
    for problem in manager.problems():
        session.emit(p.InfoEvent(msg_id=None, message=problem))
    if not manager.connections:
        return
    from flightdeck.agent.extensions._mcp_session import follow

    follow(session, manager)
    for conn in manager.connections:
        added = [
            t.name
            for t in manager.tools
            if t.connection is conn and session.tools.setdefault(t.name, t) is t
        ]
        session.emit(p.McpReadyEvent(name=conn.config.name, tools=added))


def _mcp_settings(session: AgentSession) -> McpConfig:
    """The `[mcp]` timeouts of the session's configuration (its servers
    aside); the defaults when it cannot be read (already reported)."""
    from flightdeck.agent.mcp import McpConfig, parse_mcp_config
    from flightdeck.config import ConfigError, load_config

    try:
        data = load_config(session.settings.workspace).data
    except ConfigError:
        return McpConfig()
    section = data.get("mcp")
    if not isinstance(section, Mapping):
        return McpConfig()
    return parse_mcp_config({"mcp": {k: v for k, v in section.items() if k != "servers"}})


class SessionExtension:
    """The engine's `Extension` for one session: servers a host adds while
    it runs (closed with the session) and the MCP prompts as commands."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        # MCP connections added with add_mcp_server, closed with the session
        self.managers: list[McpManager] = []

    async def add_server(self, command: p.AddMcpServerCommand) -> None:
        await add_mcp_server(self.session, command)

    async def expand_prompt(self, msg_id: str, user: Message) -> Message | None:
        from flightdeck.agent.extensions._mcp_session import expand_prompt

        return await expand_prompt(self.session, msg_id, user)

    async def close(self) -> None:
        for manager in self.managers:
            await manager.close()
        self.managers.clear()


def registered(session: AgentSession) -> SessionExtension:
    """The session's `SessionExtension`, registered on it if it has none."""
    extension = session.extension
    if not isinstance(extension, SessionExtension):
        extension = session.extension = SessionExtension(session)
    return extension
