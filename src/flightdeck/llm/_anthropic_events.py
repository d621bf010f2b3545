"""Fold Anthropic raw stream events into neutral stream events and a `Response`.

Shared by the Anthropic, Bedrock and Vertex providers: all three clients
yield the same raw Messages events, and the `anthropic` provider's express
path feeds the same events as the JSON dicts it parsed (`_get` reads both).
The stream is complete only when `message_stop` arrives; ending before it is
a `stream_interrupted`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import msgspec

from flightdeck._json import JsonError, read_json
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._sdk_errors import map_sdk_error
from flightdeck.llm._types import (
    ContentBlock,
    Response,
    StopReason,
    StreamDone,
    StreamEvent,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallReady,
    ToolUseBlock,
    Usage,
)

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


class _Block(msgspec.Struct):
    kind: str
    parts: list[str] = msgspec.field(default_factory=list)
    signature: str = ""
    tool_id: str = ""
    tool_name: str = ""
    done: ContentBlock | None = None


class AnthropicFolder(msgspec.Struct):
    """Consumes raw events in order; `feed` returns the neutral events to emit."""

    model: str
    blocks: dict[int, _Block] = msgspec.field(default_factory=dict)
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    stop_reason: str | None = None
    finished: bool = False

    def feed(self, event: Any) -> list[StreamEvent]:
        kind = _get(event, "type")
        if kind == "content_block_delta":  # by far the most frequent: first
            return self._delta(_get(event, "index"), _get(event, "delta"))
        if kind == "content_block_start":
            self._start(_get(event, "index"), _get(event, "content_block"))
        elif kind == "content_block_stop":
            return self._stop(_get(event, "index"))
        elif kind == "message_start":
            message = _get(event, "message")
            self.model = _get(message, "model") or self.model
            self._merge_usage(_get(message, "usage"))
        elif kind == "message_delta":
            self.stop_reason = _get(_get(event, "delta"), "stop_reason") or self.stop_reason
            self._merge_usage(_get(event, "usage"))
        elif kind == "message_stop":
            self.finished = True
            return [StreamDone(self.response())]
        return []

    def _start(self, index: int, block: Any) -> None:
        kind = _get(block, "type")
        state = _Block(kind)
        if kind == "text":
            text = _get(block, "text")
            if text:
                state.parts.append(text)
        elif kind == "thinking":
            state.parts.append(_get(block, "thinking") or "")
            state.signature = _get(block, "signature") or ""
        elif kind == "redacted_thinking":
            state.parts.append(_get(block, "data"))
        elif kind == "tool_use":
            state.tool_id, state.tool_name = _get(block, "id"), _get(block, "name")
            tool_input = _get(block, "input")
            if tool_input:  # complete input sent up front (non-incremental servers)
                state.parts.append(json.dumps(tool_input))
        self.blocks[index] = state

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        state = self.blocks.get(index)
        if state is None:
            return []
        kind = _get(delta, "type")
        if kind == "text_delta":
            text = _get(delta, "text")
            state.parts.append(text)
            return [TextDelta(text)]
        if kind == "thinking_delta":
            thinking = _get(delta, "thinking")
            state.parts.append(thinking)
            return [ThinkingDelta(thinking)]
        if kind == "input_json_delta":
            state.parts.append(_get(delta, "partial_json"))
        elif kind == "signature_delta":
            state.signature = _get(delta, "signature")
        return []

    def _stop(self, index: int) -> list[StreamEvent]:
        state = self.blocks.get(index)
        if state is None:
            return []
        text = "".join(state.parts)
        if state.kind == "tool_use":
            call = ToolUseBlock(state.tool_id, state.tool_name, _tool_input(text, state.tool_name))
            state.done = call
            return [ToolCallReady(call)]
        if state.kind == "text":
            state.done = TextBlock(text)
        elif state.kind == "thinking":
            state.done = ThinkingBlock(text, state.signature)
        elif state.kind == "redacted_thinking":
            state.done = ThinkingBlock(text, redacted=True)
        return []

    def _merge_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ):
            value = _get(usage, key)
            if value is not None:  # message_delta may repeat or omit the input counts
                self.usage[key] = value

    def response(self) -> Response:
        content = [b.done for _, b in sorted(self.blocks.items()) if b.done is not None]
        usage = Usage(
            input_tokens=self.usage.get("input_tokens", 0),
            output_tokens=self.usage.get("output_tokens", 0),
            cache_read_tokens=self.usage.get("cache_read_input_tokens", 0),
            cache_write_tokens=self.usage.get("cache_creation_input_tokens", 0),
        )
        return Response(content, stop_reason(self.stop_reason), usage, self.model)


def _get(event: Any, name: str) -> Any:
    """A field of an event as the SDK parses it (an object) or as JSON (a dict,
    the express path's); a missing field reads as None either way."""
    if type(event) is dict:
        return event.get(name)
    return getattr(event, name, None)


def stop_reason(value: str | None) -> StopReason:
    return _STOP_REASONS.get(value or "", "other")


def _tool_input(raw: str, name: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = read_json(raw)
    except JsonError as exc:
        message = f"the model sent invalid JSON arguments for tool {name!r}: {exc}"
        raise ProviderError("provider_error", message, retryable=True) from exc
    if not isinstance(value, dict):
        message = f"the model sent non-object arguments for tool {name!r}"
        raise ProviderError("provider_error", message, retryable=True)
    return value


async def fold_events(
    events: AsyncIterable[Any], folder: AnthropicFolder, sdk: Any
) -> AsyncIterator[StreamEvent]:
    """The neutral events of a raw event stream (the SDK's objects or the
    express path's dicts), up to `message_stop`. A failure while reading is
    mapped as `sdk` maps it mid-stream; an end before `message_stop` is a
    `stream_interrupted`."""
    try:
        async for event in events:
            for out in folder.feed(event):
                yield out
            if folder.finished:
                return
    except ProviderError:
        raise
    except Exception as exc:
        raise map_sdk_error(exc, sdk, streaming=True) from exc
    raise ProviderError(
        "stream_interrupted", "the response stream ended before message_stop", retryable=True
    )
