"""Bounds on what one protocol line may cost before it is decoded.

A command line is checked here before it is decoded: its size, and how
deeply its arrays and objects nest (`flightdeck._json.nesting_problem`).
Python's JSON decoder recurses once per level, so a short line of nested
brackets would otherwise end in a RecursionError instead of one
`protocol_error`. Both checks run at C speed.
"""

from __future__ import annotations

from flightdeck._json import nesting_problem

# One line of stdin. AionUi sends its last messages as one `init_history`
# line, so this is generous; anything longer is refused unread.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Commands are flat objects (add_mcp_server's env and headers are the deepest,
# at two levels); 64 leaves room without letting the decoder recurse far.
MAX_DEPTH = 64
# Identifiers and short settings (msg_id, call_id, model, names).
MAX_ID_CHARS = 1024
# Attached paths per message, and per path.
MAX_FILES = 256
MAX_PATH_CHARS = 4096
# Any list or object field (args, env, headers); checked before validation.
MAX_ITEMS = 1024


def line_problem(line: bytes) -> str | None:
    """Why `line` must not be decoded, or None when it is safe to decode."""
    if len(line) > MAX_LINE_BYTES:
        return f"Line too long: {len(line)} bytes (the limit is {MAX_LINE_BYTES})"
    return nesting_problem(line, MAX_DEPTH)
