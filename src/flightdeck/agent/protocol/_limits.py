"""Bounds on what one protocol line may cost before it is decoded.

A command line is checked here before `json.loads` sees it: its size, and how
deeply its arrays and objects nest. Python's JSON decoder recurses once per
level, so a short line of nested brackets would otherwise end the process
with a RecursionError instead of one `protocol_error`. Both checks run at C
speed (byte counts, one regular-expression pass, `bytes.replace` passes), so
their cost is linear in the line's size.
"""

from __future__ import annotations

import re

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

# A JSON string literal, written unrolled so the match never backtracks.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Openers become "(" and closers ")"; every other byte is dropped.
_BRACKETS = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_TOO_DEEP = b"(" * (MAX_DEPTH + 1)


def line_problem(line: bytes) -> str | None:
    """Why `line` must not be decoded, or None when it is safe to decode."""
    if len(line) > MAX_LINE_BYTES:
        return f"Line too long: {len(line)} bytes (the limit is {MAX_LINE_BYTES})"
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return None  # cannot nest deeper than the brackets it has
    brackets = _STRING.sub(b'""', line).translate(_BRACKETS, _NOT_BRACKETS)
    # A run of openers deeper than the bound is found at once; otherwise each
    # pass removes the innermost pairs (all of them), which shortens a wide
    # structure quickly and turns a deep one into such a run.
    for _ in range(MAX_DEPTH):
        if not brackets:
            return None
        if _TOO_DEEP in brackets:
            break
        shorter = brackets.replace(b"()", b"")
        if shorter == brackets:
            # Valid JSON always reduces to nothing; this line never will.
            return "Malformed JSON: unbalanced brackets"
        brackets = shorter
    if brackets:
        return f"Nesting too deep: more than {MAX_DEPTH} levels of arrays or objects"
    return None
