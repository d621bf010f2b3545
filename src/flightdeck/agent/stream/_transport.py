"""The JSON stream over byte streams: one JSON object per line.

stdout carries protocol lines only, each flushed as it is written; logs go
to stderr. Reading stdin is `flightdeck.agent.stream._lines` (shared with ACP).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from typing import BinaryIO

from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.protocol._decode import read_command
from flightdeck.agent.stream._lines import Line


class LineWriter:
    """Writes events as lines; a closed stream (client gone) is remembered, not raised.

    Lines produced in one step of the event loop leave together in one `write`
    on the file descriptor at the end of that step, before the process waits
    for anything: no line is held back waiting for another, and a burst of
    deltas costs one system call instead of one per line.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.closed = False
        self._pending: list[str] = []
        try:
            stream.flush()
            self.fd: int | None = stream.fileno()
        except (OSError, ValueError, AttributeError):
            self.fd = None  # an in-memory stream

    def __call__(self, event: p.Event) -> None:
        if self.closed:
            return
        self._pending.append(p.encode_event(event))
        if len(self._pending) > 1:
            return  # a flush is already scheduled
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # no event loop: write now
            self.flush()

    def flush(self) -> None:
        """Write every pending line now."""
        if not self._pending or self.closed:
            self._pending = []
            return
        # A lone surrogate (a non-UTF-8 byte from argv or a file name, kept by
        # surrogateescape) becomes a `\udcff` JSON escape instead of an error.
        data = ("\n".join(self._pending) + "\n").encode("utf-8", "backslashreplace")
        self._pending = []
        try:
            if self.fd is None:
                self.stream.write(data)
                self.stream.flush()
                return
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True


async def serve(
    session: AgentSession,
    lines: AsyncIterator[Line],
    *,
    on_stop_signal: Callable[[Callable[[], None]], None] | None = None,
) -> None:
    """Feed lines to the session. At end of input the running (and queued)
    turns finish, their pending approvals denied; a stop signal cancels at
    once, also while they finish. Then the session is closed."""
    done = asyncio.Event()
    if on_stop_signal is not None:
        on_stop_signal(done.set)
    iterator = aiter(lines)
    stopper = asyncio.create_task(done.wait())
    end_of_input = False
    try:
        while True:
            reader = asyncio.ensure_future(anext(iterator))
            finished, _ = await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if reader not in finished:
                reader.cancel()
                break
            try:
                line = reader.result()
            except StopAsyncIteration:
                end_of_input = True
                break
            if isinstance(line, p.ProtocolProblem):
                await session.handle(line)
            elif line.strip():
                await session.handle(read_command(line))
        if end_of_input:
            finishing = asyncio.ensure_future(session.finish_input())
            await asyncio.wait({finishing, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not finishing.done():
                finishing.cancel()
                await asyncio.gather(finishing, return_exceptions=True)
    finally:
        stopper.cancel()
        await session.close()
