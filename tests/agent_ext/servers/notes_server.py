"""A small MCP server built with the SDK's server side, for the agent tests.

    python notes_server.py            # stdio
    python notes_server.py --http     # streamable HTTP on 127.0.0.1, random port;
                                      # prints `PORT <n>` on stdout once listening
    python notes_server.py --http --token T   # ... refusing requests without
                                              # `Authorization: Bearer T`

`remember` appends to notes.txt in the working directory, so a test can see
whether a call really ran.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("notes", log_level="WARNING")


@server.tool()
def remember(text: str) -> str:
    """Append a note to notes.txt."""
    with Path("notes.txt").open("a", encoding="utf-8") as fh:
        fh.write(text + "\n")
    return f"remembered: {text}"


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(reason)


@server.tool()
def pixel() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PIXEL, format="png")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer (to stop a call mid-way)."""
    await asyncio.sleep(seconds)
    return "slept"


def _require_bearer(app: Any, token: str) -> Any:
    """Refuse HTTP requests without `Authorization: Bearer <token>`."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    return guarded


async def serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # connections made before uvicorn starts wait in the backlog
    port = sock.getsockname()[1]
    app: Any = server.streamable_http_app()
    if "--token" in sys.argv:
        app = _require_bearer(app, sys.argv[sys.argv.index("--token") + 1])
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {port}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if "--http" in sys.argv:
        asyncio.run(serve_http())
    else:
        # so a test can check the agent stops its stdio servers on shutdown
        Path("notes-server.pid").write_text(str(os.getpid()))
        server.run()
