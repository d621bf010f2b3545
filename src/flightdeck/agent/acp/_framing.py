"""Newline-delimited JSON-RPC frames on stdin/stdout for the `acp` library.

The library's own stdio streams need stdout to be a pipe or socket (a file
fails at start), it logs and drops a line that is not JSON, and a line that is
JSON but not an object ends its receive loop. JSON-RPC 2.0 asks for an error
response with a null id instead (-32700 parse error, -32600 invalid request),
and a client's bad line must not end the agent. So the agent hands the
library this transport: lines are read the way the JSON stream reads them (a
thread, any kind of stdin, a bounded line length), each is judged by
`_frames.FrameCheck` (which knows the agent's unanswered requests, since
every request leaves through `send`), and only well-formed messages go on.
Routing, ids and responses stay the library's.

What is written is strict JSON too: a value the library or the engine hands
over with a non-finite float (a model's tool arguments may carry one) is
written with null in its place, never as `NaN`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from flightdeck._json import read_json
from flightdeck.agent.acp._frames import FrameCheck
from flightdeck.agent.stream._lines import Line, ProtocolProblem, read_lines


def encode(message: dict[str, Any]) -> bytes:
    """One line of strict JSON (RFC 8259: no NaN or Infinity)."""
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite float: the decoder's hook turns each into null
        lenient = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        value = read_json(lenient, depth=None, parse_constant=lambda _name: None)
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # A lone surrogate (a non-UTF-8 file name) becomes an escape, not an error.
    return (text + "\n").encode("utf-8", "backslashreplace")


class StdioFrames:
    """The `acp` Transport protocol (send, receive, close) over stdin/stdout."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self._lines: AsyncIterator[Line] = read_lines(stdin)
        self._stdout = stdout
        self._fd = stdout.fileno()
        self._check = FrameCheck()
        self._ready: deque[dict[str, Any]] = deque()  # judged, not yet handed over
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionError("the client closed stdout")
        view = memoryview(encode(message))
        self._check.sent(message)  # before writing: the answer may come at once
        try:
            while view:  # one message is written whole before the next starts
                view = view[os.write(self._fd, view) :]
        except OSError:
            self.closed = True
            raise ConnectionError("the client closed stdout") from None

    async def receive(self) -> dict[str, Any] | None:
        while not self._ready:
            line = await anext(self._lines, None)
            if line is None:
                return None
            if isinstance(line, ProtocolProblem):  # too long: skipped unread
                verdict = self._check.too_long(line.message)
            elif not line.strip():
                continue
            else:
                verdict = self._check.check(line)
            if verdict.note is not None:
                print(f"flightdeck agent: acp: {verdict.note}", file=sys.stderr, flush=True)
            if verdict.reply is not None:
                try:
                    await self.send(verdict.reply)
                except ConnectionError:  # the client is gone: as at end of input
                    return None
            self._ready.extend(verdict.deliver)
        return self._ready.popleft()

    async def close(self) -> None:
        self.closed = True
        await asyncio.sleep(0)
