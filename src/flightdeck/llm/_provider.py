"""The one provider interface every model backend implements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from flightdeck.llm._types import Request, Response, StreamDone, StreamEvent


@runtime_checkable
class Provider(Protocol):
    """A model backend.

    `stream` yields deltas and complete tool calls, and ends with exactly one
    `StreamDone` carrying the same `Response` that `complete` would return.
    Failures raise `ProviderError`. Retrying is the caller's choice (the
    agent announces retries to its client), so providers do not retry.
    """

    name: str

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...


async def complete(provider: Provider, request: Request) -> Response:
    """Run a streamed call to the end and return its response."""
    async for event in provider.stream(request):
        if isinstance(event, StreamDone):
            return event.response
    from flightdeck.llm._errors import ProviderError

    raise ProviderError(
        "stream_interrupted", "stream ended without a final response", retryable=True
    )
