"""In-memory harness: an AgentSession driven by command lines, a scripted
provider, and events collected into a queue (no process, no network)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.agent import AgentSession, AgentSettings
from flightdeck.agent import protocol as p
from flightdeck.agent.engine._store import Loaded, Session
from flightdeck.llm import (
    Request,
    Response,
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


@dataclass
class Step:
    """One scripted model call."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, name, args
    error: Exception | None = None
    usage: Usage = field(default_factory=lambda: Usage(10, 5, 2, 1))
    hang: bool = False  # never finish (until cancelled)
    chunks: int = 2


class StepProvider:
    """A provider that plays `Step`s in order and records each request."""

    name = "scripted"

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[Request] = []
        self.cancelled = 0

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        step = self.steps.pop(0) if self.steps else Step(text="done")
        try:
            if step.thinking:
                yield ThinkingDelta(step.thinking)
            size = max(1, -(-len(step.text) // step.chunks))
            for i in range(0, len(step.text), size):
                yield TextDelta(step.text[i : i + size])
                await asyncio.sleep(0)
            if step.error is not None:
                raise step.error
            if step.hang:
                await asyncio.Event().wait()
            content: list[Any] = []
            if step.thinking:
                content.append(ThinkingBlock(step.thinking, "sig"))
            if step.text:
                content.append(TextBlock(step.text))
            for call_id, name, args in step.calls:
                block = ToolUseBlock(call_id, name, args)
                content.append(block)
                yield ToolCallReady(block)
            stop = "tool_use" if step.calls else "end_turn"
            yield StreamDone(Response(content, stop, step.usage, "scripted"))
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


class Harness:
    def __init__(
        self,
        workspace: Path,
        steps: list[Step],
        *,
        session: Session | None = None,
        loaded: Loaded | None = None,
        tools: list[Any] | None = None,
        **settings: Any,
    ) -> None:
        settings.setdefault("retry_delay", 0.0)
        self.settings = AgentSettings(workspace=workspace, model="m", **settings)
        self.provider = StepProvider(steps)
        self.events: asyncio.Queue[p.Event] = asyncio.Queue()
        self.seen: list[p.Event] = []
        self.agent = AgentSession(
            self.settings, self.provider, self._emit, session=session, loaded=loaded, tools=tools
        )

    def _emit(self, event: p.Event) -> None:
        # Every event must survive the wire: encode and decode it.
        line = p.encode_event(event)
        json.loads(line)
        decoded = p.decode_event(line)
        self.seen.append(decoded)
        self.events.put_nowait(decoded)

    async def send(self, command: dict[str, Any] | str) -> None:
        line = command if isinstance(command, str) else json.dumps(command)
        await self.agent.handle(p.read_command(line))

    # Generous timeouts: they only bound a failing test; a passing one never waits them out,
    # and a loaded 2-core CI machine can take seconds to start a Bash subprocess.
    async def next(self, timeout: float = 30.0) -> p.Event:
        return await asyncio.wait_for(self.events.get(), timeout)

    async def until(self, kind: str, timeout: float = 30.0) -> list[p.Event]:
        """Events up to and including the first of type `kind`."""
        got: list[p.Event] = []
        while True:
            event = await self.next(timeout)
            got.append(event)
            if event.type == kind:
                return got

    def drain(self) -> list[p.Event]:
        out = []
        while not self.events.empty():
            out.append(self.events.get_nowait())
        return out


def types(events: list[p.Event]) -> list[str]:
    return [e.type for e in events]


def run(coro_fn: Callable[[], Any]) -> Any:
    return asyncio.run(coro_fn())
