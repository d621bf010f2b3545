"""Scripted turns for the fake model servers, in provider-neutral terms.

A turn says what the "model" answers to one POST; each wire module renders
it in its own format. Scripts can also be loaded from JSON for the
process-level server (`python -m tests.fakes --script script.json`).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ids = itertools.count(1)


def next_id() -> int:
    """A process-wide counter so generated ids never repeat across turns."""
    return next(_ids)


@dataclass
class ToolCall:
    """One tool call the scripted model makes. `id` is generated when empty.
    A string `input` is sent verbatim as the arguments' JSON text (to script
    malformed arguments)."""

    name: str
    input: dict[str, Any] | str = field(default_factory=dict)
    id: str = ""


@dataclass
class Turn:
    """What the fake model answers to one request.

    - `text`, `thinking`, `tool_calls`: the content, in that order on the wire.
    - `error`: answer with this HTTP status and a provider-shaped JSON error body
      (429 carries `retry-after: 0`); `error_message` overrides the message
      (e.g. "prompt is too long: ..." for a context-length error).
    - `cut_after`: close the connection after this many SSE events, mid-stream.
    - `stream_error`: with `cut_after`, send an in-stream error event of this type
      (e.g. "overloaded_error") instead of just closing.
    - `clean_cut`: with `cut_after`, end the body properly (a server that just
      stops sending) instead of dropping the connection.
    - `usage`: neutral keys `input_tokens`, `output_tokens`, `cache_read_tokens`,
      `cache_write_tokens`.
    - `delta_size`: characters per text/thinking delta; `deltas`: send the text as
      exactly that many deltas (text defaults to "x" * deltas).
    - `delay`: seconds before answering; `delta_delay`: seconds between deltas
      (to stop/cancel a turn mid-stream).
    - `stop_reason`: Anthropic vocabulary (end_turn, tool_use, max_tokens, ...).
    """

    text: str = ""
    thinking: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: int | None = None
    error_message: str | None = None
    cut_after: int | None = None
    stream_error: str | None = None
    clean_cut: bool = False
    usage: dict[str, int] | None = None
    delta_size: int = 4
    deltas: int | None = None
    stop_reason: str | None = None
    delay: float = 0.0
    delta_delay: float = 0.0

    def text_chunks(self) -> list[str]:
        """The text split into the deltas it is sent as."""
        if self.deltas is not None:
            text = self.text or "x" * self.deltas
            return _split_even(text, self.deltas)
        return _split_size(self.text, self.delta_size)

    def thinking_chunks(self) -> list[str]:
        return _split_size(self.thinking or "", self.delta_size)

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"

    def resolved_usage(self) -> dict[str, int]:
        produced = len(self.text) + len(self.thinking or "")
        produced += sum(len(arguments_json(c)) for c in self.tool_calls)
        usage = {
            "input_tokens": 10,
            "output_tokens": max(1, produced // 4),
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        }
        usage.update(self.usage or {})
        return usage


def _split_size(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _split_even(text: str, count: int) -> list[str]:
    count = max(1, min(count, len(text))) if text else 0
    if count == 0:
        return []
    step, extra = divmod(len(text), count)
    chunks, start = [], 0
    for i in range(count):
        end = start + step + (1 if i < extra else 0)
        chunks.append(text[start:end])
        start = end
    return chunks


def arguments_json(call: ToolCall) -> str:
    return call.input if isinstance(call.input, str) else json.dumps(call.input)


def ensure_ids(calls: list[ToolCall], prefix: str) -> list[ToolCall]:
    """Give every call an id in the provider's style (`toolu_...`, `call_...`)."""
    return [c if c.id else ToolCall(c.name, c.input, f"{prefix}{next_id():024d}") for c in calls]


def turn_from_json(data: dict[str, Any]) -> Turn:
    """A turn from its JSON form: the `Turn` fields, tool calls as objects."""
    fields = dict(data)
    fields["tool_calls"] = [
        ToolCall(c["name"], dict(c.get("input", {})), str(c.get("id", "")))
        for c in data.get("tool_calls", [])
    ]
    return Turn(**fields)


def load_script(path: str | Path) -> list[Turn]:
    """Read a JSON list of turns."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [turn_from_json(item) for item in data]
