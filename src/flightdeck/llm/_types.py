"""Provider-neutral message, request, stream-event and response types.

Every provider maps these to its SDK's wire shapes and back. A streamed call
and a plain call end in the same `Response`, so callers never special-case.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Role = Literal["user", "assistant"]
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


class TextBlock(msgspec.Struct, frozen=True):
    text: str
    type: Literal["text"] = "text"


class ThinkingBlock(msgspec.Struct, frozen=True):
    """Model reasoning. `signature` lets Anthropic verify it when sent back;
    `redacted` marks an encrypted block whose opaque data is in `text`."""

    text: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"
    redacted: bool = False


class ImageBlock(msgspec.Struct, frozen=True):
    media_type: str  # e.g. "image/png"
    data_base64: str
    type: Literal["image"] = "image"


class ToolUseBlock(msgspec.Struct, frozen=True):
    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


class ToolResultBlock(msgspec.Struct, frozen=True):
    tool_use_id: str
    content: list[TextBlock | ImageBlock]
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


ContentBlock = TextBlock | ThinkingBlock | ImageBlock | ToolUseBlock | ToolResultBlock


class Message(msgspec.Struct, frozen=True):
    role: Role
    content: list[ContentBlock]


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool offered to the model: its name, description and input JSON Schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


class Request(msgspec.Struct, frozen=True):
    """One model call. An empty `model` means the provider's configured model."""

    model: str
    messages: list[Message]
    system: str | None = None
    tools: list[ToolSpec] = msgspec.field(default_factory=list)
    max_tokens: int = 4096
    # Extended thinking budget in tokens; None disables thinking.
    thinking_budget: int | None = None
    temperature: float | None = None


class Usage(msgspec.Struct, frozen=True):
    """Token usage of ONE model call (never cumulative across calls).

    `input_tokens` counts uncached input only; cache reads and writes are
    counted apart (Anthropic's convention; OpenAI's cached tokens are
    subtracted from its prompt tokens to match).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


class Response(msgspec.Struct, frozen=True):
    """The complete result of one model call."""

    content: list[ContentBlock]
    stop_reason: StopReason
    usage: Usage
    model: str = ""


# ---- stream events --------------------------------------------------------


class TextDelta(msgspec.Struct, frozen=True):
    text: str
    type: Literal["text_delta"] = "text_delta"


class ThinkingDelta(msgspec.Struct, frozen=True):
    text: str
    type: Literal["thinking_delta"] = "thinking_delta"


class ToolCallReady(msgspec.Struct, frozen=True):
    """A tool call whose arguments have been fully received."""

    call: ToolUseBlock
    type: Literal["tool_call"] = "tool_call"


class StreamDone(msgspec.Struct, frozen=True):
    """Always the last event of a successful stream."""

    response: Response
    type: Literal["done"] = "done"


StreamEvent = TextDelta | ThinkingDelta | ToolCallReady | StreamDone
