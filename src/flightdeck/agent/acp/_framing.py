"""Newline-delimited JSON-RPC frames on stdin/stdout for the `acp` library.

The library's own stdio transport logs and drops a line that is not JSON, and
a line that is JSON but not an object ends its receive loop. JSON-RPC 2.0 asks
for an error response with a null id instead (-32700 parse error, -32600
invalid request), and a client's bad line must not end the agent: this
transport answers such lines itself and hands only message objects on.
Everything else (routing, ids, responses) stays the library's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

# The library's default for stdio: big enough for images in a prompt.
LINE_LIMIT = 50 * 1024 * 1024


def _error(code: int, message: str, detail: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": message, "data": {"details": detail}},
    }


def check_frame(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """One line as (message, None), or (None, the error response to send)."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, _error(-32700, "Parse error", str(exc))
    if not isinstance(value, dict):
        return None, _error(-32600, "Invalid request", "a message must be a JSON object")
    if "method" in value and not isinstance(value["method"], str):
        return None, _error(-32600, "Invalid request", "method must be a string")
    if "method" not in value and "id" not in value:
        return None, _error(-32600, "Invalid request", "neither a request nor a response")
    return value, None


class StdioFrames:
    """The `acp` Transport protocol (send, receive, close) over asyncio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        async with self._lock:
            self._writer.write(data.encode("utf-8", "backslashreplace"))
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            message, error = check_frame(line)
            if message is not None:
                return message
            if error is not None:
                await self.send(error)

    async def _read_line(self) -> bytes | None:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # EOF, maybe after a last line
            return exc.partial or None
        except asyncio.LimitOverrunError:
            # Too long to be a message: skip to its end and answer once.
            size = 0
            while True:
                try:
                    size += len(await self._reader.readuntil(b"\n"))
                    break
                except asyncio.LimitOverrunError as more:
                    size += len(await self._reader.readexactly(more.consumed))
                except asyncio.IncompleteReadError:
                    return None
            await self.send(
                _error(-32600, "Invalid request", f"line longer than {LINE_LIMIT} bytes")
            )
            return b""

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
