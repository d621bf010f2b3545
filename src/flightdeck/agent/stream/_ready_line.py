"""The `ready` line built with the standard library only, with the JSON line
encoding the protocol shares with it (`protocol/_json.py`).

`agent --json-stream` writes `ready` before asyncio and the engine
are imported when nothing but the settings, the session id and the sandbox
decide the line (agent/stream/_early.py): no MCP server, no extension tool, so
`capabilities.mcp` is false and `mcp_servers` / `tools` are absent. The line
must equal, byte for byte, what `protocol._models.encode_event` makes of the
event the engine builds (`AgentSession.ready_event`, decorated by the
extensions, with the sandbox state); a hypothesis test compares the two over
settings.
"""

from __future__ import annotations

from flightdeck.agent.engine._settings import EFFORT_LEVELS, MODES, AgentSettings
from flightdeck.agent.protocol._json import PROTOCOL_VERSION, dumps, escape_breaks

__all__ = ["ready_line"]


def ready_line(settings: AgentSettings, session_id: str | None, sandbox: str) -> str:
    """The `ready` event of a session started with `settings` and no
    extension, as one JSON line (no trailing newline). The fields in the
    order of `protocol._models.ReadyEvent` and `Capabilities`, as the engine
    fills them (`engine._live_config.capabilities`, image input not yet known)."""
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
