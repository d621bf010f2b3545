"""Reading stdin as lines, shared by the JSON stream and ACP.

stdin is read by a thread so any kind of file (pipe, tty, file) works; a
line longer than `MAX_LINE_BYTES` is skipped and reported. Nothing here
imports pydantic or the engine: `agent --acp` reads its `initialize`
request through this module before the engine is imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import BinaryIO

from flightdeck.agent.protocol._limits import MAX_LINE_BYTES
from flightdeck.agent.protocol._wire import ProtocolProblem

Line = bytes | ProtocolProblem


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
        yield ProtocolProblem(f"Line too long: {size} bytes (the limit is {MAX_LINE_BYTES})")


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


def sigterm_hook(callback: Callable[[], None]) -> None:
    """Install `callback` for SIGTERM (and SIGINT) on the running loop."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, callback)


__all__ = ["Line", "ProtocolProblem", "read_lines", "sigterm_hook"]
