"""The Anthropic Messages wire format: SSE events and JSON bodies for a turn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes._script import Turn, arguments_json, ensure_ids, next_id

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_JSON_CHUNK = 8  # characters of tool-input JSON per input_json_delta


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _usage(turn: Turn) -> dict[str, int]:
    u = turn.resolved_usage()
    return {
        "input_tokens": u["input_tokens"],
        "output_tokens": u["output_tokens"],
        "cache_creation_input_tokens": u["cache_write_tokens"],
        "cache_read_input_tokens": u["cache_read_tokens"],
    }


def _message(turn: Turn, model: str, content: list[dict[str, Any]], final: bool) -> dict[str, Any]:
    usage = _usage(turn)
    if not final:
        usage["output_tokens"] = 1
    return {
        "id": f"msg_{next_id():024d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": turn.resolved_stop_reason() if final else None,
        "stop_sequence": None,
        "usage": usage,
    }


def _signature(thinking: str) -> str:
    return f"sig_{len(thinking)}_fake"


def stream_events(turn: Turn, model: str) -> Iterator[bytes]:
    """Every SSE event of a streamed turn, in order, one item per event."""
    yield sse(
        "message_start", {"type": "message_start", "message": _message(turn, model, [], False)}
    )
    yield sse("ping", {"type": "ping"})
    index = 0
    if turn.thinking is not None:
        block = {"type": "thinking", "thinking": "", "signature": ""}
        yield _block_start(index, block)
        for chunk in turn.thinking_chunks():
            yield _delta(index, {"type": "thinking_delta", "thinking": chunk})
        yield _delta(index, {"type": "signature_delta", "signature": _signature(turn.thinking)})
        yield _block_stop(index)
        index += 1
    chunks = turn.text_chunks()
    if chunks:
        yield _block_start(index, {"type": "text", "text": ""})
        for chunk in chunks:
            yield _delta(index, {"type": "text_delta", "text": chunk})
        yield _block_stop(index)
        index += 1
    for call in ensure_ids(turn.tool_calls, "toolu_"):
        yield _block_start(
            index, {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        )
        raw = arguments_json(call)
        for i in range(0, len(raw), _JSON_CHUNK):
            part = raw[i : i + _JSON_CHUNK]
            yield _delta(index, {"type": "input_json_delta", "partial_json": part})
        yield _block_stop(index)
        index += 1
    usage = _usage(turn)
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": turn.resolved_stop_reason(), "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield sse("message_stop", {"type": "message_stop"})


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    data = {"type": "content_block_start", "index": index, "content_block": block}
    return sse("content_block_start", data)


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _block_stop(index: int) -> bytes:
    return sse("content_block_stop", {"type": "content_block_stop", "index": index})


def message_body(turn: Turn, model: str) -> dict[str, Any]:
    """The non-streaming JSON response for a turn."""
    content: list[dict[str, Any]] = []
    if turn.thinking is not None:
        sig = _signature(turn.thinking)
        content.append({"type": "thinking", "thinking": turn.thinking, "signature": sig})
    text = "".join(turn.text_chunks())
    if text:
        content.append({"type": "text", "text": text})
    for call in ensure_ids(turn.tool_calls, "toolu_"):
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
    return _message(turn, model, content, True)


def error_body(status: int, message: str | None) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message or f"fake {kind}"}}


def stream_error(kind: str, message: str | None) -> bytes:
    """An error event sent inside an already-started stream."""
    error = {"type": kind, "message": message or f"fake {kind}"}
    return sse("error", {"type": "error", "error": error})
