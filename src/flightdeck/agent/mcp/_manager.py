"""Start every configured MCP server concurrently, each within the timeout;
a server that fails is reported and left out, never fatal to the others."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from flightdeck.agent.mcp._config import McpConfig
from flightdeck.agent.mcp._connection import McpConnection, describe
from flightdeck.agent.mcp._tool import McpTool


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: str
    where: str
    connected: bool
    tools: tuple[str, ...] = ()
    error: str | None = None


@dataclass
class McpManager:
    """The live connections; `close()` ends them all (on shutdown)."""

    connections: list[McpConnection] = field(default_factory=list)
    tools: list[McpTool] = field(default_factory=list)
    statuses: list[ServerStatus] = field(default_factory=list)

    @property
    def available(self) -> bool:
        return bool(self.tools)

    def problems(self) -> list[str]:
        return [
            f"MCP server {s.name} unavailable: {s.error}" for s in self.statuses if not s.connected
        ]

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections), return_exceptions=True)
        self.connections.clear()


async def connect_servers(config: McpConfig, workspace: Path) -> McpManager:
    manager = McpManager()
    conns = [McpConnection(server, workspace) for server in config.servers]
    results = await asyncio.gather(
        *(c.connect(config.connect_timeout) for c in conns), return_exceptions=True
    )
    seen: set[str] = set()
    for conn, result in zip(conns, results, strict=True):
        server = conn.config
        if isinstance(result, BaseException):
            error = str(result) if isinstance(result, ConnectionError) else describe(result)
            manager.statuses.append(
                ServerStatus(server.name, server.transport, server.where, False, error=error)
            )
            continue
        manager.connections.append(conn)
        tools = [McpTool(conn, remote) for remote in result]
        tools = [t for t in tools if t.name not in seen and not seen.add(t.name)]  # type: ignore[func-returns-value]
        manager.tools.extend(tools)
        names = tuple(t.name for t in tools)
        manager.statuses.append(
            ServerStatus(server.name, server.transport, server.where, True, names)
        )
    return manager
