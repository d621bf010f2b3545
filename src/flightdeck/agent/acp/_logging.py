"""The ACP library's own log lines, as one-line diagnostics on stderr.

The library reports what it could not handle (a notification for a method
the agent does not serve, one whose params do not validate) with
`logging.exception` on the root logger, which would print a traceback per
bad line. Such a line is the client's mistake, not a crash: stderr gets one
line naming the message and the reason, like flightdeck's other diagnostics.
"""

from __future__ import annotations

import logging
import sys


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = f"flightdeck agent: acp: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            text += f": {type(error).__name__}" + (f": {first}" if first else "")
        return text


def one_line_logs() -> None:
    """Route root-logger records to stderr, one line each, no traceback."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, _OneLine) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    root.addHandler(handler)  # also keeps logging from installing its default
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
