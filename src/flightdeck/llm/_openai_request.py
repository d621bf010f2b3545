"""Map a neutral `Request` to OpenAI Chat Completions parameters.

Tool results become `role: "tool"` messages placed right after the assistant
message that asked for them (the API requires that order); images inside a
tool result, which a tool message cannot carry, follow in a user message.
Text-only content is sent as a plain string, which every OpenAI-compatible
server accepts; content parts are used only when there are images.
"""

from __future__ import annotations

import json
from typing import Any

from flightdeck.llm._types import (
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)


def openai_params(
    request: Request, model: str, *, max_tokens_field: str, extra: dict[str, Any]
) -> dict[str, Any]:
    """Keyword arguments for `client.chat.completions.create` (without `stream`)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_message(message))
    params: dict[str, Any] = {
        "model": request.model or model,
        "messages": messages,
        max_tokens_field: request.max_tokens,
    }
    if request.tools:
        params["tools"] = [_tool(t) for t in request.tools]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    params.update(extra)
    if not request.tools:  # the API refuses a tool choice without tools
        params.pop("tool_choice", None)
        params.pop("parallel_tool_calls", None)
    elif params.get("tool_choice") not in (None, "auto") and _answers_tools(request):
        # A forced choice holds for a turn's first call only: forced on every
        # call, the model could never answer after its tools have run.
        del params["tool_choice"]
    return params


def _answers_tools(request: Request) -> bool:
    last = request.messages[-1] if request.messages else None
    return last is not None and any(isinstance(b, ToolResultBlock) for b in last.content)


def _tool(tool: ToolSpec) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
    return {"type": "function", "function": function}


def _message(message: Message) -> list[dict[str, Any]]:
    if message.role == "assistant":
        return [_assistant(message)]
    out: list[dict[str, Any]] = []
    parts: list[TextBlock | ImageBlock] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            out.extend(_tool_result(block))
        elif isinstance(block, TextBlock | ImageBlock):
            parts.append(block)
    if parts:
        out.append({"role": "user", "content": _content(parts)})
    return out


def _assistant(message: Message) -> dict[str, Any]:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.input)},
            }
            for c in calls
        ]
    return out


def _tool_result(block: ToolResultBlock) -> list[dict[str, Any]]:
    text = "\n".join(p.text for p in block.content if isinstance(p, TextBlock))
    if block.is_error:
        text = f"Error: {text}"
    images = [p for p in block.content if isinstance(p, ImageBlock)]
    if images and not text:
        text = f"(the result is {len(images)} image(s), sent in the next message)"
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": block.tool_use_id, "content": text}
    ]
    if images:
        note = TextBlock(f"Image(s) returned by tool call {block.tool_use_id}:")
        out.append({"role": "user", "content": _content([note, *images])})
    return out


def _content(parts: list[TextBlock | ImageBlock]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextBlock) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextBlock))
    return [
        {"type": "text", "text": p.text}
        if isinstance(p, TextBlock)
        else {
            "type": "image_url",
            "image_url": {"url": f"data:{p.media_type};base64,{p.data_base64}"},
        }
        for p in parts
    ]
