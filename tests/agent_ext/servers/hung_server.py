"""An MCP server that never answers: it reads its input and says nothing.

    python hung_server.py LOG

Each start appends `start <pid>` to LOG, and each end (input closed, or
SIGTERM) `end <pid>`, so a test can see whether connections overlapped.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

LOG = Path(sys.argv[1])


def note(word: str) -> None:
    with LOG.open("a", encoding="utf-8") as fh:
        fh.write(f"{word} {os.getpid()}\n")


def on_term(signum: int, frame: object) -> None:
    note("end")
    os._exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)
    note("start")
    for _line in sys.stdin.buffer:
        pass
    note("end")
