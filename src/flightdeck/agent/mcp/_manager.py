"""Start every configured MCP server concurrently, under one deadline
(`connect_timeout` from the moment they are all started); a server that
fails is reported and left out, never fatal to the others.

The manager keeps each server's tools current: when a server's list changes,
its tools are replaced and the owner's `on_tools_changed` hears which went
and which came (the agent session swaps them in its own tool table).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.agent.mcp._config import McpConfig, McpServerConfig
from flightdeck.agent.mcp._connection import McpConnection, RemoteTool, describe
from flightdeck.agent.mcp._tool import McpTool
from flightdeck.config import UNTRUSTED

if TYPE_CHECKING:
    from mcp_types import ElicitRequestParams, ElicitResult

    from flightdeck.agent.mcp._auth import SignIn

# (server, its tools before, its tools now)
ToolsChanged = Callable[[str, list[McpTool], list[McpTool]], None]
Elicit = Callable[[str, "ElicitRequestParams"], Awaitable["ElicitResult"]]


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: str
    where: str
    connected: bool
    tools: tuple[str, ...] = ()
    error: str | None = None
    code: str | None = None  # of a failed sign-in (`mcp.auth_*`)
    prompts: tuple[str, ...] = ()  # slash command names, without the slash


@dataclass
class McpManager:
    """The live connections; `close()` ends them all (on shutdown)."""

    connections: list[McpConnection] = field(default_factory=list)
    tools: list[McpTool] = field(default_factory=list)
    statuses: list[ServerStatus] = field(default_factory=list)

    @property
    def available(self) -> bool:
        return bool(self.tools)

    def follow(
        self,
        on_tools_changed: ToolsChanged,
        elicit: Elicit | None = None,
        on_prompts_changed: Callable[[McpConnection], None] | None = None,
    ) -> None:
        """Hear of every server's tool (and prompt) changes, and answer its
        elicitations with `elicit` (without one they are declined)."""
        for conn in self.connections:
            conn.on_tools_changed = lambda c, remote: self._replace(c, remote, on_tools_changed)
            conn.elicit = elicit
            conn.on_prompts_changed = on_prompts_changed

    def _replace(self, conn: McpConnection, remote: list[RemoteTool], tell: ToolsChanged) -> None:
        old = [t for t in self.tools if t.connection is conn]
        taken = {t.name for t in self.tools if t.connection is not conn}
        new: list[McpTool] = []
        for tool in tools_of(conn, remote):
            if tool.name not in taken:
                taken.add(tool.name)
                new.append(tool)
        self.tools = [t for t in self.tools if t.connection is not conn] + new
        names = tuple(t.name for t in new)
        self.statuses = [
            replace(s, tools=names) if s.name == conn.config.name and s.connected else s
            for s in self.statuses
        ]
        tell(conn.config.name, old, new)

    def hold(self, servers: Sequence[McpServerConfig]) -> None:
        """Show `servers` as not started: their workspace is not trusted (the
        caller reports that once, for the whole workspace)."""
        error = "not started: the workspace is not trusted"
        self.statuses += [
            ServerStatus(s.name, s.transport, s.where, False, error=error, code=UNTRUSTED)
            for s in servers
        ]

    def problems(self) -> list[str]:
        return [
            f"MCP server {s.name} unavailable: {s.error}"
            for s in self.statuses
            if not s.connected and s.code != UNTRUSTED
        ]

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections), return_exceptions=True)
        self.connections.clear()


def tools_of(conn: McpConnection, remote: list[RemoteTool]) -> list[McpTool]:
    """The server's tools, then `resources` when it has some (a server tool of
    that name keeps it)."""
    tools = [McpTool(conn, item) for item in remote]
    if conn.resources:
        from flightdeck.agent.mcp._resources import McpResourcesTool

        tools.append(McpResourcesTool(conn))
    return tools


async def connect_servers(
    config: McpConfig, workspace: Path, sign_in: SignIn | None = None
) -> McpManager:
    """`sign_in(server, url)` shows an OAuth server's sign-in URL to a person;
    without it such a server fails with `mcp.auth_required`."""
    manager = McpManager()
    conns = [
        McpConnection(server, workspace, sign_in, config.sign_in_timeout)
        for server in config.servers
    ]
    results = await asyncio.gather(
        *(c.connect(config.connect_timeout) for c in conns), return_exceptions=True
    )
    seen: set[str] = set()
    for conn, result in zip(conns, results, strict=True):
        server = conn.config
        if isinstance(result, BaseException):
            error = str(result) if isinstance(result, ConnectionError) else describe(result)
            code = getattr(result, "code", None)
            manager.statuses.append(
                ServerStatus(
                    server.name, server.transport, server.where, False, error=error, code=code
                )
            )
            continue
        manager.connections.append(conn)
        tools = tools_of(conn, result)
        tools = [t for t in tools if t.name not in seen and not seen.add(t.name)]  # type: ignore[func-returns-value]
        manager.tools.extend(tools)
        names = tuple(t.name for t in tools)
        from flightdeck.agent.mcp._prompts import commands_of

        prompts = tuple(c.name for c in commands_of(conn))
        manager.statuses.append(
            ServerStatus(server.name, server.transport, server.where, True, names, prompts=prompts)
        )
    return manager
