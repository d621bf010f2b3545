"""The agent over the Agent Client Protocol (`flightdeck agent --acp`).

The same engine as the JSON stream (`AgentSession`), reached through the
`agent-client-protocol` library's JSON-RPC connection instead of JSON lines.
Importing this package imports that library; nothing else in flightdeck does.
See docs/acp.md for how each ACP method and update maps to the engine.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from acp import Agent


async def run_acp(flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> int:
    """Serve ACP on stdin/stdout until the client closes stdin; the exit code."""
    from acp import run_agent

    from flightdeck.agent.acp._framing import StdioFrames
    from flightdeck.agent.acp._server import FlightdeckAgent

    agent = FlightdeckAgent(flags, os.environ if env is None else env)
    try:
        # The methods ACP marks optional or unstable are left out (the library
        # answers them method-not-found), so this is not the full Protocol.
        await run_agent(cast("Agent", agent), StdioFrames(sys.stdin.buffer, sys.stdout.buffer))
    finally:
        await agent.close()
    return 0


__all__ = ["run_acp"]
