"""Helpers for driving providers from synchronous tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from flightdeck.llm import (
    Message,
    Provider,
    ProviderError,
    Request,
    Response,
    StreamDone,
    StreamEvent,
    TextBlock,
)

T = TypeVar("T")


def user(text: str) -> Message:
    return Message("user", [TextBlock(text)])


def request(text: str = "hi", **fields: Any) -> Request:
    return Request(model=fields.pop("model", "test-model"), messages=[user(text)], **fields)


async def _closing(provider: Provider, work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    finally:
        aclose = getattr(provider, "aclose", None)
        if aclose is not None:
            await aclose()


def events_of(provider: Provider, *requests: Request) -> list[list[StreamEvent]]:
    """Stream each request in turn (one event loop, one SDK client)."""

    async def work() -> list[list[StreamEvent]]:
        return [[event async for event in provider.stream(r)] for r in requests]

    return asyncio.run(_closing(provider, work))


def stream(provider: Provider, req: Request) -> tuple[list[StreamEvent], Response]:
    [events] = events_of(provider, req)
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert not any(isinstance(e, StreamDone) for e in events[:-1])
    return events, done.response


def error_of(provider: Provider, req: Request) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        events_of(provider, req)
    return info.value
