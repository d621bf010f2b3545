"""The JSON Stream Protocol's commands (client -> agent, stdin), closed
models that `read_command` (`_decode.py`) decodes a line into; re-exported
by `_models.py` with the events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from flightdeck.agent.protocol._limits import MAX_FILES, MAX_ID_CHARS, MAX_PATH_CHARS
from flightdeck.agent.protocol._wire import Mode, _Wire

# ---- commands (stdin) -------------------------------------------------------


Id = Annotated[str, Meta(max_length=MAX_ID_CHARS)]
Name = Annotated[str, Meta(max_length=MAX_ID_CHARS)]
Files = Annotated[list[Annotated[str, Meta(max_length=MAX_PATH_CHARS)]], Meta(max_length=MAX_FILES)]


class MessageCommand(_Wire, frozen=True, kw_only=True):
    """The user's text is `input` (the spec) or `content` (aionrs and AionUi);
    both may be sent only when they are equal."""

    type: Literal["message"] = "message"
    msg_id: Id
    input: str | None = None
    content: str | None = None
    files: Files = field(default_factory=list)

    def __post_init__(self) -> None:
        # Runs after the fields are valid; `_decode` reports its ValueError as
        # the whole message (no field name), as it names its fields itself.
        problem = text_problem(self.input, self.content)
        if problem is not None:
            raise ValueError(problem)

    @property
    def text(self) -> str:
        return self.input if self.input is not None else (self.content or "")


def text_problem(input: str | None, content: str | None) -> str | None:
    """Why a message's `input` and `content` do not give one text, if they do not."""
    if input is None and content is None:
        return "missing field input (or content)"
    if input is not None and content is not None and input != content:
        return "input and content differ; send one of them"
    return None


class StopCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["stop"] = "stop"


class ToolApproveCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["tool_approve"] = "tool_approve"
    call_id: Id
    scope: Literal["once", "always"] = "once"
    # An extension: the values a host's user gave for an MCP elicitation
    # (docs/agent-extensions.md); ignored for a tool call.
    content: dict[str, Any] | None = None


class ToolDenyCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["tool_deny"] = "tool_deny"
    call_id: Id
    reason: str = "User denied"


class InitHistoryCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["init_history"] = "init_history"
    text: str


class SetModeCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["set_mode"] = "set_mode"
    mode: Mode


# ---- aionrs's extensions (crates/aion-protocol/src/commands.rs) -------------


class PingCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["ping"] = "ping"


ImageInput = Literal["supported", "unsupported", "unknown"]


class SetConfigCommand(_Wire, frozen=True, kw_only=True):
    """Every field is optional; null is the same as absent. Applied from the
    next turn (at once when no turn runs)."""

    type: Literal["set_config"] = "set_config"
    model: Name | None = None
    image_input: ImageInput | None = None
    thinking: Literal["enabled", "disabled"] | None = None
    # `_decode` first turns what pydantic's lax integers took (true, 5.0, "5")
    # into an int, so the lines accepted before msgspec still are.
    thinking_budget: Annotated[int, Meta(ge=0)] | None = None
    effort: Name | None = None
    compaction: Literal["off", "safe", "full"] | None = None


class AddMcpServerCommand(_Wire, frozen=True, kw_only=True):
    type: Literal["add_mcp_server"] = "add_mcp_server"
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
