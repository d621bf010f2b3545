"""The `ready` line built with the standard library only.

A light start-up path (issue 14) would write `ready` before asyncio, pydantic
and the engine are imported, so the line has to be produced without the
protocol models and still equal, byte for byte, what `encode_event` makes of
the `ReadyEvent` the engine builds. This covers the case that needs no
extension to be loaded first: no MCP server configured and no extension tool
(`mcp` is false and `mcp_servers` / `tools` are absent). A test compares it
with the models' encoding for many configurations.
"""

from __future__ import annotations

import json

__all__ = ["PROTOCOL_VERSION", "ready_line"]

# Kept equal to `_protocol.PROTOCOL_VERSION`, MODES and `_live_config.EFFORT_LEVELS`
# by the equivalence test; importing them would import pydantic.
PROTOCOL_VERSION = "0.1.0"
_MODES = ("default", "auto_edit", "yolo")
_EFFORT_LEVELS = {"openai": ("low", "medium", "high")}

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_UNICODE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def ready_line(
    session_id: str | None,
    *,
    provider: str,
    thinking: bool,
    mode: str,
    sandbox: str | None,
    image_input: str = "unknown",
) -> str:
    """The `ready` event as one JSON line (no trailing newline)."""
    levels = list(_EFFORT_LEVELS.get(provider, ()))
    caps: dict[str, object] = {
        "tool_approval": True,
        "thinking": thinking,
        "mcp": False,
        "image_input": image_input,
        "effort": bool(levels),
        "effort_levels": levels,
        "modes": list(_MODES),
        "current_mode": mode,
    }
    if sandbox is not None:
        caps["sandbox"] = sandbox
    event: dict[str, object] = {"type": "ready", "version": PROTOCOL_VERSION}
    if session_id is not None:
        event["session_id"] = session_id
    event["capabilities"] = caps
    line = _dumps(event)
    # The same escaping of Unicode line breaks as `_protocol.encode_event`.
    return line if line.isascii() else line.translate(_UNICODE_BREAKS)
