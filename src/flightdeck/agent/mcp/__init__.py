"""MCP servers as agent tools.

    config = parse_mcp_config(load_config(workspace).data)  # [mcp.servers.NAME]
    manager = await connect_servers(config, workspace)  # concurrently, with a timeout
    tools = manager.tools  # mcp__<server>__<tool>, category mcp
    await manager.close()  # on shutdown

Connections use the official `mcp` SDK (stdio subprocess or streamable HTTP);
the SDK is imported only when a server is configured.
"""

from __future__ import annotations

from flightdeck.agent.mcp._config import (
    McpConfig,
    McpServerConfig,
    parse_mcp_config,
    tool_name,
)
from flightdeck.agent.mcp._manager import McpManager, ServerStatus, connect_servers
from flightdeck.agent.mcp._tool import McpTool, map_result

__all__ = [
    "McpConfig",
    "McpManager",
    "McpServerConfig",
    "McpTool",
    "ServerStatus",
    "connect_servers",
    "map_result",
    "parse_mcp_config",
    "tool_name",
]
