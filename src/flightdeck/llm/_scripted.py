"""A provider that plays scripted turns in memory, for tests and offline demos.

Like pydantic-ai's test models: a real `Provider`, no network. Each call
records its `Request` and plays the next turn; a turn may also be a function
of the request. When the script is exhausted every call answers "done".
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flightdeck.llm._errors import ProviderError
from flightdeck.llm._types import (
    ContentBlock,
    Request,
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


@dataclass(frozen=True)
class ScriptedTurn:
    """One scripted answer.

    `tool_calls` are `ToolUseBlock`s or `(name, input)` pairs (ids generated).
    `error` is raised after `cut_after` events (immediately when None); with
    `cut_after` and no `error`, the stream ends as `stream_interrupted`.
    `chunk_size` splits text and thinking into deltas of that many characters
    (0: one delta each). `delay` waits before the first event (to test stop).
    """

    text: str = ""
    thinking: str | None = None
    tool_calls: list[ToolUseBlock | tuple[str, dict[str, Any]]] = field(default_factory=list)
    error: ProviderError | None = None
    cut_after: int | None = None
    usage: Usage | None = None
    stop_reason: StopReason | None = None
    chunk_size: int = 0
    delay: float = 0.0


ScriptItem = ScriptedTurn | str | Callable[[Request], ScriptedTurn | Awaitable[ScriptedTurn]]


class ScriptedProvider:
    """Plays `turns` in order; `requests` records what each call received."""

    def __init__(self, turns: Iterable[ScriptItem] = (), *, name: str = "scripted") -> None:
        self.name = name
        self.model = "scripted"
        self.requests: list[Request] = []
        self._turns = list(turns)
        self._ids = itertools.count(1)

    def add(self, *turns: ScriptItem) -> None:
        self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        return len(self._turns)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        turn = await self._next(request)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error is not None and turn.cut_after is None:
            raise turn.error
        events = self._events(turn, request.model or self.model)
        for count, event in enumerate(events):
            if turn.cut_after is not None and count >= turn.cut_after:
                raise turn.error or ProviderError(
                    "stream_interrupted", "scripted stream cut", retryable=True
                )
            yield event
            await asyncio.sleep(0)  # let a cancelling caller in between events

    async def _next(self, request: Request) -> ScriptedTurn:
        item: ScriptItem = self._turns.pop(0) if self._turns else "done"
        if isinstance(item, str):
            return ScriptedTurn(text=item)
        if isinstance(item, ScriptedTurn):
            return item
        result = item(request)
        return await result if isinstance(result, Awaitable) else result

    def _events(self, turn: ScriptedTurn, model: str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        content: list[ContentBlock] = []
        if turn.thinking is not None:
            events.extend(ThinkingDelta(p) for p in _chunks(turn.thinking, turn.chunk_size))
            content.append(ThinkingBlock(turn.thinking, "scripted"))
        if turn.text:
            events.extend(TextDelta(p) for p in _chunks(turn.text, turn.chunk_size))
            content.append(TextBlock(turn.text))
        for call in turn.tool_calls:
            block = call if isinstance(call, ToolUseBlock) else self._call(*call)
            events.append(ToolCallReady(block))
            content.append(block)
        stop = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
        usage = turn.usage or Usage(input_tokens=10, output_tokens=max(1, len(turn.text) // 4))
        events.append(StreamDone(Response(content, stop, usage, model)))
        return events

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolUseBlock:
        return ToolUseBlock(f"toolu_scripted_{next(self._ids)}", name, dict(arguments))


def _chunks(text: str, size: int) -> list[str]:
    if size <= 0 or not text:
        return [text] if text else []
    return [text[i : i + size] for i in range(0, len(text), size)]
