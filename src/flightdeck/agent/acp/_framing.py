"""Newline-delimited JSON-RPC frames on stdin/stdout for the `acp` library.

The library's own stdio streams need stdout to be a pipe or socket (a file
fails at start), it logs and drops a line that is not JSON, and a line that is
JSON but not an object ends its receive loop. JSON-RPC 2.0 asks for an error
response with a null id instead (-32700 parse error, -32600 invalid request),
and a client's bad line must not end the agent. So the agent hands the
library this transport: lines are read the way the JSON stream reads them (a
thread, any kind of stdin, a bounded line length), bad frames are answered
here, and only message objects go on. Routing, ids and responses stay the
library's.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from flightdeck.agent._lines import Line, ProtocolProblem, read_lines


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
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # Recursion: too deep
        return None, _error(-32700, "Parse error", str(exc))
    if not isinstance(value, dict):
        return None, _error(-32600, "Invalid request", "a message must be a JSON object")
    if "method" in value and not isinstance(value["method"], str):
        return None, _error(-32600, "Invalid request", "method must be a string")
    if "method" not in value and "id" not in value:
        return None, _error(-32600, "Invalid request", "neither a request nor a response")
    if "id" in value and not isinstance(value["id"], str | int | None):
        return None, _error(-32600, "Invalid request", "id must be a string or a number")
    return value, None


class StdioFrames:
    """The `acp` Transport protocol (send, receive, close) over stdin/stdout."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self._lines: AsyncIterator[Line] = read_lines(stdin)
        self._stdout = stdout
        self._fd = stdout.fileno()
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionError("the client closed stdout")
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        # A lone surrogate (a non-UTF-8 file name) becomes an escape, not an error.
        view = memoryview(data.encode("utf-8", "backslashreplace"))
        try:
            while view:  # one message is written whole before the next starts
                view = view[os.write(self._fd, view) :]
        except OSError:
            self.closed = True
            raise ConnectionError("the client closed stdout") from None

    async def receive(self) -> dict[str, Any] | None:
        async for line in self._lines:
            if isinstance(line, ProtocolProblem):  # too long: skipped unread
                await self.send(_error(-32600, "Invalid request", line.message))
                continue
            if not line.strip():
                continue
            message, error = check_frame(line)
            if message is not None:
                return message
            if error is not None:
                await self.send(error)
        return None

    async def close(self) -> None:
        self.closed = True
        await asyncio.sleep(0)
