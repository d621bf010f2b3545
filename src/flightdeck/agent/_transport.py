"""Line framing over byte streams: one JSON object per line.

stdout carries protocol lines only, each flushed as it is written; logs go
to stderr. stdin is read by a thread so any kind of file (pipe, tty, file)
works; a line longer than `MAX_LINE_BYTES` is skipped and reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import BinaryIO

from flightdeck.agent import _protocol as p
from flightdeck.agent._decode import read_command
from flightdeck.agent._engine import AgentSession
from flightdeck.agent._limits import MAX_LINE_BYTES


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


Line = bytes | p.ProtocolProblem


def _bounded_lines(stream: BinaryIO) -> Iterator[Line]:
    """Lines of at most MAX_LINE_BYTES; a longer one is skipped to its end
    without being kept in memory, and stands as one problem."""
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            yield line
            continue
        size = len(line)
        while line and not line.endswith(b"\n"):
            line = stream.readline(1024 * 1024)
            size += len(line)
        yield p.ProtocolProblem(f"Line too long: {size} bytes (the limit is {MAX_LINE_BYTES})")


async def read_lines(stream: BinaryIO) -> AsyncIterator[Line]:
    """Lines from a blocking stream, read on a daemon thread; ends at EOF."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Line | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for line in _bounded_lines(stream):
                loop.call_soon_threadsafe(queue.put_nowait, line)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="flightdeck-stdin", daemon=True).start()
    while True:
        line = await queue.get()
        if line is None:
            return
        yield line


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


def sigterm_hook(callback: Callable[[], None]) -> None:
    """Install `callback` for SIGTERM (and SIGINT) on the running loop."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, callback)
