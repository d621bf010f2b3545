"""The JSON line encoding every protocol line shares: the protocol's version,
the compact encoder, and the escape of Unicode line breaks.

The standard library only: `agent --json-stream` writes its early `ready`
line with these before msgspec's models are imported (agent/stream/_early.py),
and `_models.encode_event` writes every event with them, so the two agree
byte for byte.
"""

from __future__ import annotations

import json

__all__ = ["PROTOCOL_VERSION", "dumps", "escape_breaks"]

PROTOCOL_VERSION = "0.1.0"

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_UNICODE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def escape_breaks(line: str) -> str:
    """Valid JSON either way, but line splitters that honour Unicode line
    breaks (NEL, LS, PS) would cut the line there; escaped, every reader
    sees one line."""
    return line if line.isascii() else line.translate(_UNICODE_BREAKS)
