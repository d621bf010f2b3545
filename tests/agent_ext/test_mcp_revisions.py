"""The MCP revisions the agent speaks (docs/agent-extensions.md, "Protocol
revision"): 2026-07-28 with a server that answers `server/discover`, else the
initialize handshake at 2025-11-25; a server that elicits the pre-2026 way
(a request mid-call) on a 2026-07-28 connection gets the SDK's
NoBackChannelError, and the call is an error result."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import mcp_types

from flightdeck.agent.mcp import connect_servers, parse_mcp_config
from tests.agent_ext._common import SERVERS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agent-extensions.md"
OLD_WAYS = SERVERS / "old_ways_server.py"


def connected_versions(tmp_path: Path) -> dict[str, str | None]:
    servers = {
        "live": {"command": sys.executable, "args": [str(SERVERS / "live_server.py")]},
        "hand": {"command": sys.executable, "args": [str(OLD_WAYS), "handshake"]},
    }
    config = parse_mcp_config({"mcp": {"connect_timeout": 30, "servers": servers}})

    async def go() -> dict[str, str | None]:
        manager = await connect_servers(config, tmp_path)
        try:
            assert not manager.problems(), manager.problems()
            return {c.config.name: c.protocol_version for c in manager.connections}
        finally:
            await manager.close()

    return asyncio.run(go())


def test_the_revisions_negotiated_are_the_ones_the_docs_name(tmp_path: Path) -> None:
    versions = connected_versions(tmp_path)
    assert versions == {"live": "2026-07-28", "hand": "2025-11-25"}
    assert mcp_types.LATEST_PROTOCOL_VERSION == "2026-07-28"
    text = " ".join(DOCS.read_text().split())
    assert "speaks MCP 2026-07-28" in text
    assert "initialize handshake at 2025-11-25" in text
    assert "2024-11-05" in text  # the oldest a server may counter with


def test_an_elicitation_asked_the_old_way_fails_the_call(tmp_path: Path) -> None:
    old = {"command": sys.executable, "args": [str(OLD_WAYS), "elicit"]}
    config = parse_mcp_config({"mcp": {"connect_timeout": 30, "servers": {"old": old}}})

    async def go() -> None:
        manager = await connect_servers(config, tmp_path)
        try:
            [conn] = manager.connections
            assert conn.protocol_version == "2026-07-28"
            asked: list[str] = []

            async def elicit(server: str, params: object) -> object:
                asked.append(server)
                raise AssertionError("never reached")

            conn.elicit = elicit  # type: ignore[assignment]
            [tool] = [t for t in manager.tools if t.name == "mcp__old__ask"]
            out = await tool.run({}, None)  # type: ignore[arg-type]
            assert out.status == "error", out
            assert "no back-channel" in out.output, out.output
            assert asked == []
        finally:
            await manager.close()

    asyncio.run(go())
