"""MCP servers written for revisions before 2026-07-28, for the agent tests.

    python old_ways_server.py elicit      # SDK-built; its tool elicits by a
                                          # request mid-call (`ctx.elicit`)
    python old_ways_server.py handshake   # knows only the initialize handshake
                                          # (no `server/discover`), one tool

The second is a few lines of JSON-RPC over stdio on purpose: a server that
predates 2026-07-28, answering `server/discover` as an unknown method.
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel


class Answer(BaseModel):
    ok: bool = False


def sdk_server() -> None:
    server = MCPServer("old", log_level="WARNING")

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user the way servers did before 2026-07-28."""
        answer = await ctx.elicit("Ship it?", Answer)
        return answer.action

    server.run()


def handshake_server() -> None:
    def send(message: dict[str, object]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        method, rid = request.get("method"), request["id"]
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "handshake", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/list":
            tool = {"name": "echo", "inputSchema": {"type": "object"}}
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}})
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})


if __name__ == "__main__":
    sdk_server() if sys.argv[1] == "elicit" else handshake_server()
