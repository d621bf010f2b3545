"""The JSON Stream Protocol: every wire message as a typed, closed model.

Commands (client -> agent, stdin) and events (agent -> client, stdout) are
pydantic models that reject unknown fields, tagged by their `type`. Exactly
two functions touch the wire: `read_command` turns one line into a command or
a `ProtocolProblem`, and `encode_event` turns an event into one line. A bad
line never raises; it becomes a problem the session reports as an `error`
event with code `protocol_error`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from flightdeck.agent._limits import MAX_FILES, MAX_ID_CHARS, MAX_PATH_CHARS
from flightdeck.agent._lines import ProtocolProblem as ProtocolProblem
from flightdeck.agent._ready_line import PROTOCOL_VERSION as PROTOCOL_VERSION
from flightdeck.agent._ready_line import dumps as _dumps
from flightdeck.agent._ready_line import escape_breaks

Category = Literal["info", "edit", "exec", "mcp"]
Mode = Literal["default", "auto_edit", "yolo"]
MODES: tuple[Mode, ...] = ("default", "auto_edit", "yolo")
ErrorCode = Literal[
    "provider_error",
    "tool_error",
    "config_error",
    "protocol_error",
    "internal_error",
    # The conversation cannot be made to fit the model's context window
    # (agent part 2; see docs/agent-extensions.md).
    "context_overflow",
]


class _Wire(BaseModel):
    # defer_build: each model's validator is built on first use, not at import,
    # so `ready` is not delayed by models the session has not needed yet.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# ---- commands (stdin) -------------------------------------------------------


Id = Annotated[str, Field(max_length=MAX_ID_CHARS)]
Name = Annotated[str, Field(max_length=MAX_ID_CHARS)]


class MessageCommand(_Wire):
    """The user's text is `input` (the spec) or `content` (aionrs and AionUi);
    both may be sent only when they are equal."""

    type: Literal["message"]
    msg_id: Id
    input: str | None = None
    content: str | None = None
    files: list[Annotated[str, Field(max_length=MAX_PATH_CHARS)]] = Field(
        default_factory=list, max_length=MAX_FILES
    )

    @model_validator(mode="after")
    def _one_text(self) -> MessageCommand:
        if self.input is None and self.content is None:
            raise ValueError("missing field input (or content)")
        if self.input is not None and self.content is not None and self.input != self.content:
            raise ValueError("input and content differ; send one of them")
        return self

    @property
    def text(self) -> str:
        return self.input if self.input is not None else (self.content or "")


class StopCommand(_Wire):
    type: Literal["stop"]


class ToolApproveCommand(_Wire):
    type: Literal["tool_approve"]
    call_id: Id
    scope: Literal["once", "always"] = "once"
    # An extension: the values a host's user gave for an MCP elicitation
    # (docs/agent-extensions.md); ignored for a tool call.
    content: dict[str, Any] | None = None


class ToolDenyCommand(_Wire):
    type: Literal["tool_deny"]
    call_id: Id
    reason: str = "User denied"


class InitHistoryCommand(_Wire):
    type: Literal["init_history"]
    text: str


class SetModeCommand(_Wire):
    type: Literal["set_mode"]
    mode: Mode


# ---- aionrs's extensions (crates/aion-protocol/src/commands.rs) -------------


class PingCommand(_Wire):
    type: Literal["ping"]


ImageInput = Literal["supported", "unsupported", "unknown"]


class SetConfigCommand(_Wire):
    """Every field is optional; null is the same as absent. Applied from the
    next turn (at once when no turn runs)."""

    type: Literal["set_config"]
    model: Name | None = None
    image_input: ImageInput | None = None
    thinking: Literal["enabled", "disabled"] | None = None
    thinking_budget: int | None = Field(default=None, ge=0)
    effort: Name | None = None
    compaction: Literal["off", "safe", "full"] | None = None


class AddMcpServerCommand(_Wire):
    type: Literal["add_mcp_server"]
    name: Name
    transport: Literal["stdio", "http", "streamable_http", "sse"]
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None


Command = (
    MessageCommand
    | StopCommand
    | ToolApproveCommand
    | ToolDenyCommand
    | InitHistoryCommand
    | SetModeCommand
    | PingCommand
    | SetConfigCommand
    | AddMcpServerCommand
)
COMMAND_TYPES: tuple[type[_Wire], ...] = (
    MessageCommand,
    StopCommand,
    ToolApproveCommand,
    ToolDenyCommand,
    InitHistoryCommand,
    SetModeCommand,
    PingCommand,
    SetConfigCommand,
    AddMcpServerCommand,
)

# ---- events (stdout) ----------------------------------------------------------


def _absent(value: Any) -> bool:
    return value is None


class McpServerInfo(_Wire):
    """One configured MCP server in `ready.capabilities.mcp_servers`."""

    transport: Literal["stdio", "http"]
    where: str
    connected: bool
    tools: list[str] = Field(default_factory=list)
    error: str | None = Field(default=None, exclude_if=_absent)
    error_code: str | None = Field(default=None, exclude_if=_absent)  # `mcp.auth_*`
    # the server's prompts as slash commands (without the `/`)
    prompts: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)


class Capabilities(_Wire):
    tool_approval: bool
    thinking: bool
    mcp: bool
    # aionrs's additions (crates/aion-protocol/src/events.rs), always present.
    image_input: ImageInput = "unknown"
    effort: bool = False
    effort_levels: list[str] = Field(default_factory=list)
    modes: list[Mode] = Field(default_factory=lambda: list(MODES))
    current_mode: Mode = "default"
    # Optional additions (a minor, backward-compatible extension of the spec):
    # present only when MCP servers are configured / extension tools are loaded.
    mcp_servers: dict[str, McpServerInfo] | None = Field(default=None, exclude_if=_absent)
    # tool name -> where it comes from, for tools beyond the built-in ones
    tools: dict[str, str] | None = Field(default=None, exclude_if=_absent)
    # how Bash is confined: "bubblewrap" or "off" (docs/protocol.md)
    sandbox: Literal["bubblewrap", "off"] | None = Field(default=None, exclude_if=_absent)


class ReadyEvent(_Wire):
    type: Literal["ready"] = "ready"
    version: str = PROTOCOL_VERSION
    session_id: str | None = None
    capabilities: Capabilities


class StreamStartEvent(_Wire):
    type: Literal["stream_start"] = "stream_start"
    msg_id: str


class TextDeltaEvent(_Wire):
    type: Literal["text_delta"] = "text_delta"
    text: str
    msg_id: str


class ThinkingEvent(_Wire):
    type: Literal["thinking"] = "thinking"
    text: str
    msg_id: str


class ToolInfo(_Wire):
    name: str
    category: Category
    args: dict[str, Any]
    description: str


class ToolRequestEvent(_Wire):
    type: Literal["tool_request"] = "tool_request"
    msg_id: str
    call_id: str
    tool: ToolInfo


class ToolRunningEvent(_Wire):
    type: Literal["tool_running"] = "tool_running"
    msg_id: str
    call_id: str
    tool_name: str


class ToolResultEvent(_Wire):
    type: Literal["tool_result"] = "tool_result"
    msg_id: str
    call_id: str
    tool_name: str
    status: Literal["success", "error"]
    output: str
    output_type: Literal["text", "diff", "image"] = "text"
    metadata: dict[str, Any] | None = None


class ToolProgressEvent(_Wire):
    """An extension: a running call's progress as its MCP server reports it."""

    type: Literal["tool_progress"] = "tool_progress"
    msg_id: str
    call_id: str
    tool_name: str
    progress: float
    total: float | None = None
    message: str | None = None


class ToolCancelledEvent(_Wire):
    type: Literal["tool_cancelled"] = "tool_cancelled"
    msg_id: str
    call_id: str
    reason: str


class UsageInfo(_Wire):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class StreamEndEvent(_Wire):
    type: Literal["stream_end"] = "stream_end"
    msg_id: str
    usage: UsageInfo


class ErrorInfo(_Wire):
    code: ErrorCode
    message: str
    retryable: bool = False


class ErrorEvent(_Wire):
    type: Literal["error"] = "error"
    msg_id: str | None = None
    error: ErrorInfo


class InfoEvent(_Wire):
    type: Literal["info"] = "info"
    msg_id: str | None = None
    message: str


class PongEvent(_Wire):
    type: Literal["pong"] = "pong"


class EffectiveConfig(_Wire):
    """The settings the next turn uses (a flightdeck addition to aionrs's event)."""

    model: str
    thinking: Literal["enabled", "disabled"]
    thinking_budget: int | None = None
    effort: str | None = None
    compaction: Literal["off", "safe", "full"]
    image_input: ImageInput


class ConfigChangedEvent(_Wire):
    type: Literal["config_changed"] = "config_changed"
    capabilities: Capabilities
    config: EffectiveConfig


class McpReadyEvent(_Wire):
    type: Literal["mcp_ready"] = "mcp_ready"
    name: str
    tools: list[str]


class McpAuthRequiredEvent(_Wire):
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
    field = model.model_fields["type"]
    args: tuple[Any, ...] = getattr(field.annotation, "__args__", ())
    return str(args[0])


_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


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
    out except `msg_id`. Equal to `model_dump(mode="json")` without the unset
    optionals (a test checks it), but needs no serializer to be built, so the
    first event (`ready`) costs no schema build."""
    if isinstance(value, BaseModel):
        return {k: _plain(v) for k, v in value.__dict__.items() if v is not None or k in _KEEP_NULL}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def decode_event(line: str | bytes) -> Event:
    """Parse an event line (for clients and tests). Raises `ValidationError`."""
    adapter = _ADAPTERS.get("event")
    if adapter is None:
        adapter = TypeAdapter(Annotated[Event, Field(discriminator="type")])
        _ADAPTERS["event"] = adapter
    event: Event = adapter.validate_json(line)
    return event
