"""The JSON Stream Protocol: every wire message as a typed, closed model.

Commands (client -> agent, stdin) and events (agent -> client, stdout) are
frozen msgspec Structs that reject unknown fields, tagged by their `type`
(msgspec, not pydantic: importing pydantic cost ~78 ms of the agent's first
reply; docs/decisions.md). Exactly
two functions touch the wire: `read_command` turns one line into a command or
a `ProtocolProblem`, and `encode_event` turns an event into one line. A bad
line never raises; it becomes a problem the session reports as an `error`
event with code `protocol_error`. The commands are declared in `_commands.py`
and the models' base in `_wire.py`; this module declares the events and
re-exports the rest, so the agent reads the whole wire from here.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import field

# Commands and the shared base live in modules of their own; the rest of the
# agent reads the whole wire from this one.
from flightdeck.agent.protocol._commands import (
    COMMAND_TYPES,
    AddMcpServerCommand,
    Command,
    ImageInput,
    InitHistoryCommand,
    MessageCommand,
    PingCommand,
    SetConfigCommand,
    SetModeCommand,
    StopCommand,
    ToolApproveCommand,
    ToolDenyCommand,
)
from flightdeck.agent.protocol._json import PROTOCOL_VERSION as PROTOCOL_VERSION
from flightdeck.agent.protocol._json import dumps as _dumps
from flightdeck.agent.protocol._json import escape_breaks
from flightdeck.agent.protocol._wire import MODES, Category, ErrorCode, Mode, ProtocolProblem, _Wire

__all__ = [  # what is re-exported; the events below are this module's own
    "COMMAND_TYPES",
    "MODES",
    "AddMcpServerCommand",
    "Category",
    "Command",
    "ErrorCode",
    "ImageInput",
    "InitHistoryCommand",
    "MessageCommand",
    "Mode",
    "PingCommand",
    "ProtocolProblem",
    "SetConfigCommand",
    "SetModeCommand",
    "StopCommand",
    "ToolApproveCommand",
    "ToolDenyCommand",
]

# ---- events (stdout) ----------------------------------------------------------


class McpServerInfo(_Wire, frozen=True, kw_only=True):
    """One configured MCP server in `ready.capabilities.mcp_servers`."""

    transport: Literal["stdio", "http"]
    where: str
    connected: bool
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    error_code: str | None = None  # `mcp.auth_*`
    # the server's prompts as slash commands (without the `/`); on the wire even
    # when empty, left out by `mcp_server_data` (the `tools` listing)
    prompts: list[str] = field(default_factory=list)


class Capabilities(_Wire, frozen=True, kw_only=True):
    tool_approval: bool
    thinking: bool
    mcp: bool
    # aionrs's additions (crates/aion-protocol/src/events.rs), always present.
    image_input: ImageInput = "unknown"
    effort: bool = False
    effort_levels: list[str] = field(default_factory=list)
    modes: list[Mode] = field(default_factory=lambda: list(MODES))
    current_mode: Mode = "default"
    # Optional additions (a minor, backward-compatible extension of the spec):
    # present only when MCP servers are configured / extension tools are loaded.
    # (None-valued fields are left out of every line: `_plain`.)
    mcp_servers: dict[str, McpServerInfo] | None = None
    # tool name -> where it comes from, for tools beyond the built-in ones
    tools: dict[str, str] | None = None
    # how Bash is confined: "bubblewrap" or "off" (docs/protocol.md)
    sandbox: Literal["bubblewrap", "off"] | None = None


class ReadyEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["ready"] = "ready"
    version: str = PROTOCOL_VERSION
    session_id: str | None = None
    capabilities: Capabilities


class StreamStartEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["stream_start"] = "stream_start"
    msg_id: str


class TextDeltaEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["text_delta"] = "text_delta"
    text: str
    msg_id: str


class ThinkingEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["thinking"] = "thinking"
    text: str
    msg_id: str


class ToolInfo(_Wire, frozen=True, kw_only=True):
    name: str
    category: Category
    args: dict[str, Any]
    description: str


class ToolRequestEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["tool_request"] = "tool_request"
    msg_id: str
    call_id: str
    tool: ToolInfo


class ToolRunningEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["tool_running"] = "tool_running"
    msg_id: str
    call_id: str
    tool_name: str


class ToolResultEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["tool_result"] = "tool_result"
    msg_id: str
    call_id: str
    tool_name: str
    status: Literal["success", "error"]
    output: str
    output_type: Literal["text", "diff", "image"] = "text"
    metadata: dict[str, Any] | None = None


class ToolProgressEvent(_Wire, frozen=True, kw_only=True):
    """An extension: a running call's progress as its MCP server reports it."""

    type: Literal["tool_progress"] = "tool_progress"
    msg_id: str
    call_id: str
    tool_name: str
    progress: float
    total: float | None = None
    message: str | None = None


class ToolCancelledEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["tool_cancelled"] = "tool_cancelled"
    msg_id: str
    call_id: str
    reason: str


class UsageInfo(_Wire, frozen=True, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class StreamEndEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["stream_end"] = "stream_end"
    msg_id: str
    usage: UsageInfo


class ErrorInfo(_Wire, frozen=True, kw_only=True):
    code: ErrorCode
    message: str
    retryable: bool = False


class ErrorEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["error"] = "error"
    msg_id: str | None = None
    error: ErrorInfo


class InfoEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["info"] = "info"
    msg_id: str | None = None
    message: str


class PongEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["pong"] = "pong"


class EffectiveConfig(_Wire, frozen=True, kw_only=True):
    """The settings the next turn uses (a flightdeck addition to aionrs's event)."""

    model: str
    thinking: Literal["enabled", "disabled"]
    thinking_budget: int | None = None
    effort: str | None = None
    compaction: Literal["off", "safe", "full"]
    image_input: ImageInput


class ConfigChangedEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["config_changed"] = "config_changed"
    capabilities: Capabilities
    config: EffectiveConfig


class McpReadyEvent(_Wire, frozen=True, kw_only=True):
    type: Literal["mcp_ready"] = "mcp_ready"
    name: str
    tools: list[str]


class McpAuthRequiredEvent(_Wire, frozen=True, kw_only=True):
    """An MCP server wants a person to sign in at `url` (a flightdeck addition)."""

    type: Literal["mcp_auth_required"] = "mcp_auth_required"
    name: str
    url: str


Event = (
    ReadyEvent
    | StreamStartEvent
    | TextDeltaEvent
    | ThinkingEvent
    | ToolRequestEvent
    | ToolRunningEvent
    | ToolResultEvent
    | ToolProgressEvent
    | ToolCancelledEvent
    | StreamEndEvent
    | ErrorEvent
    | InfoEvent
    | PongEvent
    | ConfigChangedEvent
    | McpReadyEvent
    | McpAuthRequiredEvent
)
EVENT_TYPES: tuple[type[_Wire], ...] = (
    ReadyEvent,
    StreamStartEvent,
    TextDeltaEvent,
    ThinkingEvent,
    ToolRequestEvent,
    ToolRunningEvent,
    ToolResultEvent,
    ToolProgressEvent,
    ToolCancelledEvent,
    StreamEndEvent,
    ErrorEvent,
    InfoEvent,
    PongEvent,
    ConfigChangedEvent,
    McpReadyEvent,
    McpAuthRequiredEvent,
)

# Fields that are written as `null` rather than left out (the spec's examples
# show `"msg_id": null` on errors); every other None-valued field is omitted.
_KEEP_NULL = frozenset({"msg_id"})


def wire_type(model: type[_Wire]) -> str:
    """The `type` tag of a command or event model."""
    fields = model.__struct_fields__
    defaults = model.__struct_defaults__  # aligned with the last fields
    return str(defaults[fields.index("type") - len(fields) + len(defaults)])


_EVENTS_BY_TYPE: dict[str, type[_Wire]] = {}


def encode_event(event: Event) -> str:
    """One event as one JSON line (no trailing newline)."""
    if isinstance(event, TextDeltaEvent | ThinkingEvent):
        # The hot path (one line per streamed delta), built directly; a test
        # checks it equals the generic encoding.
        line = (
            f'{{"type":"{event.type}","text":{_dumps(event.text)},"msg_id":{_dumps(event.msg_id)}}}'
        )
    else:
        line = _dumps(_plain(event))
    return escape_breaks(line)


def _plain(value: Any) -> Any:
    """A model as JSON data: fields in declaration order, None-valued fields left
    out except `msg_id`."""
    if isinstance(value, _Wire):
        out = {}
        for k in value.__struct_fields__:
            v = getattr(value, k)
            if v is not None or k in _KEEP_NULL:
                out[k] = _plain(v)
        return out
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def mcp_server_data(info: McpServerInfo) -> dict[str, Any]:
    """One MCP server as the `tools` listing shows it: as on the wire, but
    without an empty `prompts` (the listing's shape before msgspec)."""
    data: dict[str, Any] = _plain(info)
    if not info.prompts:
        del data["prompts"]
    return data


def decode_event(line: str | bytes) -> Event:
    """Parse an event line (for clients and tests). Raises
    `msgspec.ValidationError` (or `msgspec.DecodeError` for malformed JSON)."""
    if not _EVENTS_BY_TYPE:
        _EVENTS_BY_TYPE.update((wire_type(m), m) for m in EVENT_TYPES)
    data = msgspec.json.decode(line)
    kind = data.get("type") if isinstance(data, dict) else None
    model = _EVENTS_BY_TYPE.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise msgspec.ValidationError(f"Unknown event type: {kind!r}")
    event: Event = msgspec.convert(data, model)  # type: ignore[assignment]
    return event
