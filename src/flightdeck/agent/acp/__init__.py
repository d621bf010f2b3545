"""The agent over the Agent Client Protocol (`flightdeck agent --acp`).

The same engine as the JSON stream (`AgentSession`), reached through the
`agent-client-protocol` library's JSON-RPC connection instead of JSON lines.
Importing this package imports that library; nothing else in flightdeck does.
See docs/acp.md for how each ACP method and update maps to the engine.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from acp import Agent


async def run_acp(flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> int:
    """Serve ACP on stdin/stdout until the client closes stdin; the exit code."""
    from flightdeck.agent.acp._library import import_acp

    import_acp()  # first: the cheap way, before anything else imports `acp`
    from acp import run_agent

    from flightdeck.agent.acp._framing import StdioFrames
    from flightdeck.agent.acp._logging import one_line_logs
    from flightdeck.agent.acp._server import FlightdeckAgent
    from flightdeck.agent.stream._lines import sigterm_hook

    one_line_logs()
    agent = FlightdeckAgent(flags, os.environ if env is None else env)
    # The methods ACP marks optional or unstable are left out (the library
    # answers them method-not-found), so this is not the full Protocol.
    frames = StdioFrames(sys.stdin.buffer, sys.stdout.buffer)
    serving = asyncio.ensure_future(run_agent(cast("Agent", agent), frames))

    # SIGTERM/SIGINT end serving like EOF does: turns are cancelled, MCP
    # servers closed; every completed step is already on disk.
    def stop() -> None:
        serving.cancel()

    sigterm_hook(stop)
    try:
        await asyncio.wait({serving})
    finally:
        if not serving.done():
            serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await agent.close()
    if not serving.cancelled() and (error := serving.exception()) is not None:
        # The library's receive loop failed (no frame is known to make it do
        # so: frames are judged before it sees them). One line and exit 1;
        # a traceback would go through interpreter teardown, which aborts
        # while the stdin thread is still reading.
        print(
            f"flightdeck agent --acp: the connection failed: {type(error).__name__}: {error}"
            " [acp.internal]",
            file=sys.stderr,
            flush=True,
        )
        return 1
    return 0


__all__ = ["run_acp"]
