"""Conversation messages to and from JSON, in the shape sessions store."""

from __future__ import annotations

from typing import Any

from flightdeck.llm import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)


class CodecError(ValueError):
    """A stored message does not have the expected shape."""


def block_to_json(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        out: dict[str, Any] = {"type": "thinking", "text": block.text, "signature": block.signature}
        if block.redacted:  # redacted thinking must go back to the provider as such
            out["redacted"] = True
        return out
    if isinstance(block, ImageBlock):
        return {"type": "image", "media_type": block.media_type, "data": block.data_base64}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "is_error": block.is_error,
        "content": [block_to_json(b) for b in block.content],
    }


def block_from_json(data: Any) -> ContentBlock:
    if not isinstance(data, dict):
        raise CodecError("a content block must be an object")
    try:
        kind = data["type"]
        if kind == "text":
            return TextBlock(str(data["text"]))
        if kind == "thinking":
            return ThinkingBlock(
                str(data["text"]),
                str(data.get("signature", "")),
                redacted=bool(data.get("redacted", False)),
            )
        if kind == "image":
            return ImageBlock(str(data["media_type"]), str(data["data"]))
        if kind == "tool_use":
            return ToolUseBlock(str(data["id"]), str(data["name"]), dict(data["input"]))
        if kind == "tool_result":
            inner = [block_from_json(b) for b in data["content"]]
            parts = [b for b in inner if isinstance(b, TextBlock | ImageBlock)]
            return ToolResultBlock(str(data["tool_use_id"]), parts, bool(data.get("is_error")))
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"bad {data.get('type')} block: {exc}") from None
    raise CodecError(f"unknown block type {kind!r}")


def message_to_json(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": [block_to_json(b) for b in message.content]}


def message_from_json(data: Any) -> Message:
    if not isinstance(data, dict) or data.get("role") not in ("user", "assistant"):
        raise CodecError("a message must be an object with role user or assistant")
    content = data.get("content")
    if not isinstance(content, list):
        raise CodecError("message content must be a list")
    return Message(data["role"], [block_from_json(b) for b in content])
