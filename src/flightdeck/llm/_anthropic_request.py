"""Map a neutral `Request` to Anthropic Messages API parameters.

Prompt caching: the system prompt, the last tool definition and the last
block of the last user message carry `cache_control: ephemeral`. Each marks
the end of a prefix the API may cache; the moving breakpoint on the newest
user message lets every step of a long agent loop read the previous step's
prefix from the cache (3 of the 4 breakpoints the API allows).
"""

from __future__ import annotations

from typing import Any

from flightdeck.llm._types import (
    ContentBlock,
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

_EPHEMERAL = {"type": "ephemeral"}
# Extended thinking needs max_tokens above the thinking budget; leave this much
# room for the visible answer when the caller's max_tokens would not.
_ANSWER_ROOM = 1024
_MIN_BUDGET = 1024  # the smallest thinking budget the API accepts


def anthropic_params(request: Request, model: str, *, cache: bool = True) -> dict[str, Any]:
    """Keyword arguments for `client.messages.create` (without `stream`)."""
    params: dict[str, Any] = {
        "model": request.model or model,
        "max_tokens": request.max_tokens,
        "messages": _messages(request.messages, cache),
    }
    if request.system:
        system: dict[str, Any] = {"type": "text", "text": request.system}
        if cache:
            system["cache_control"] = _EPHEMERAL
        params["system"] = [system]
    if request.tools:
        params["tools"] = _tools(request.tools, cache)
    if request.thinking_budget:
        budget = max(_MIN_BUDGET, request.thinking_budget)
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        params["max_tokens"] = max(request.max_tokens, budget + _ANSWER_ROOM)
    elif request.temperature is not None:
        # The API rejects a temperature other than 1 with thinking on. Sent as an
        # extra body field: recent SDKs no longer list it as an argument.
        params["extra_body"] = {"temperature": request.temperature}
    return params


def _tools(tools: list[ToolSpec], cache: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]
    if cache:
        out[-1]["cache_control"] = _EPHEMERAL
    return out


def _messages(messages: list[Message], cache: bool) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        content = [b for b in (_block(block) for block in message.content) if b is not None]
        if content:
            out.append({"role": message.role, "content": content})
    if cache:
        _mark_last_user_block(out)
    return out


def _mark_last_user_block(messages: list[dict[str, Any]]) -> None:
    for message in reversed(messages):
        if message["role"] == "user":
            cacheable = [b for b in message["content"] if b["type"] != "thinking"]
            if cacheable:
                cacheable[-1]["cache_control"] = _EPHEMERAL
            return


def _block(block: ContentBlock) -> dict[str, Any] | None:
    """One content block on the wire; None for blocks the API would reject."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ImageBlock):
        return _image(block)
    if isinstance(block, ThinkingBlock):
        return _thinking(block)
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return _tool_result(block)


def _image(block: ImageBlock) -> dict[str, Any]:
    source = {"type": "base64", "media_type": block.media_type, "data": block.data_base64}
    return {"type": "image", "source": source}


def _thinking(block: ThinkingBlock) -> dict[str, Any] | None:
    if block.redacted:
        return {"type": "redacted_thinking", "data": block.text}
    if not block.signature:
        return None  # unsigned reasoning (e.g. from another provider) cannot be sent back
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


def _tool_result(block: ToolResultBlock) -> dict[str, Any]:
    content = [
        _image(part) if isinstance(part, ImageBlock) else {"type": "text", "text": part.text}
        for part in block.content
        if isinstance(part, ImageBlock) or part.text
    ]
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    if content:
        result["content"] = content
    if block.is_error:
        result["is_error"] = True
    return result
