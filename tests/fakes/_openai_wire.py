"""The OpenAI Chat Completions wire format: SSE chunks and JSON bodies for a turn.

Thinking is sent as `reasoning_content` deltas, the way OpenAI-compatible
reasoning servers (vLLM, DeepSeek) stream it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from tests.fakes._script import Turn, arguments_json, ensure_ids, next_id

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}
_JSON_CHUNK = 8
DONE = b"data: [DONE]\n\n"


def _data(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def _usage(turn: Turn) -> dict[str, Any]:
    u = turn.resolved_usage()
    # OpenAI counts cached tokens inside prompt_tokens.
    prompt = u["input_tokens"] + u["cache_read_tokens"]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u["output_tokens"],
        "total_tokens": prompt + u["output_tokens"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
    }


def finish_reason(turn: Turn) -> str:
    return _FINISH.get(turn.resolved_stop_reason(), "stop")


def stream_events(turn: Turn, model: str) -> Iterator[bytes]:
    """Every SSE chunk of a streamed turn, in order, ending with `[DONE]`."""
    head = {
        "id": f"chatcmpl-{next_id()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _data({**head, "choices": [choice]})

    yield chunk({"role": "assistant", "content": ""})
    for part in turn.thinking_chunks():
        yield chunk({"reasoning_content": part})
    for part in turn.text_chunks():
        yield chunk({"content": part})
    for index, call in enumerate(ensure_ids(turn.tool_calls, "call_")):
        first = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [first]})
        raw = arguments_json(call)
        for i in range(0, len(raw), _JSON_CHUNK):
            piece: dict[str, Any] = {
                "index": index,
                "function": {"arguments": raw[i : i + _JSON_CHUNK]},
            }
            yield chunk({"tool_calls": [piece]})
    yield chunk({}, finish_reason(turn))
    yield _data({**head, "choices": [], "usage": _usage(turn)})
    yield DONE


def message_body(turn: Turn, model: str) -> dict[str, Any]:
    """The non-streaming JSON response for a turn."""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(turn.text_chunks()) or None}
    if turn.thinking is not None:
        message["reasoning_content"] = turn.thinking
    calls = ensure_ids(turn.tool_calls, "call_")
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": arguments_json(c)},
            }
            for c in calls
        ]
    return {
        "id": f"chatcmpl-{next_id()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(turn)}],
        "usage": _usage(turn),
    }


def error_body(status: int, message: str | None) -> dict[str, Any]:
    kind, code = _ERROR_TYPES.get(status, ("server_error", None))
    text = message or f"fake error {status}"
    if message and "context length" in message:
        code = "context_length_exceeded"
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


def stream_error(kind: str, message: str | None) -> bytes:
    """An error object sent inside an already-started stream."""
    return _data({"error": {"message": message or f"fake {kind}", "type": kind, "code": None}})
