"""The `ready` line built with the standard library only, and the JSON line
encoding the protocol shares with it.

`agent --json-stream` writes `ready` before asyncio and the engine
are imported when nothing but the settings, the session id and the sandbox
decide the line (agent/_early.py): no MCP server, no extension tool, so
`capabilities.mcp` is false and `mcp_servers` / `tools` are absent. The line
must equal, byte for byte, what `_protocol.encode_event` makes of the event
the engine builds (`AgentSession.ready_event`, decorated by the extensions,
with the sandbox state); a hypothesis test compares the two over settings.
"""

from __future__ import annotations

import json

from flightdeck.agent._settings import EFFORT_LEVELS, MODES, AgentSettings

__all__ = ["PROTOCOL_VERSION", "dumps", "escape_breaks", "ready_line"]

PROTOCOL_VERSION = "0.1.0"

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_UNICODE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def escape_breaks(line: str) -> str:
    """Valid JSON either way, but line splitters that honour Unicode line
    breaks (NEL, LS, PS) would cut the line there; escaped, every reader
    sees one line."""
    return line if line.isascii() else line.translate(_UNICODE_BREAKS)


def ready_line(settings: AgentSettings, session_id: str | None, sandbox: str) -> str:
    """The `ready` event of a session started with `settings` and no
    extension, as one JSON line (no trailing newline). The fields in the
    order of `_protocol.ReadyEvent` and `Capabilities`, as the engine fills
    them (`_live_config.capabilities`, image input not yet known)."""
    levels = list(EFFORT_LEVELS.get(settings.provider, ()))
    caps: dict[str, object] = {
        "tool_approval": True,
        "thinking": settings.thinking_budget is not None,
        "mcp": False,
        "image_input": "unknown",
        "effort": bool(levels),
        "effort_levels": levels,
        "modes": list(MODES),
        "current_mode": settings.mode,
        "sandbox": sandbox,
    }
    event: dict[str, object] = {"type": "ready", "version": PROTOCOL_VERSION}
    if session_id is not None:
        event["session_id"] = session_id
    event["capabilities"] = caps
    return escape_breaks(dumps(event))
