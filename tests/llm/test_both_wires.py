"""Behaviour both SDK-backed providers share, run against each wire format."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.llm import Provider, TextBlock, TextDelta, create_provider
from tests.fakes import FakeLLMServer, ToolCall, Turn
from tests.llm._helpers import error_of, request, stream

WIRES = ["anthropic", "openai"]


def provider(name: str, server: FakeLLMServer) -> Provider:
    url = server.base_url + ("/v1" if name == "openai" else "")
    return create_provider(name, api_key="k", base_url=url)


@pytest.mark.parametrize("name", WIRES)
def test_malformed_tool_arguments_are_a_retryable_provider_error(name: str) -> None:
    with FakeLLMServer([Turn(tool_calls=[ToolCall("Write", '{"file_path": ')])]) as server:
        error = error_of(provider(name, server), request())
    assert error.code == "provider_error" and error.retryable
    assert "Write" in error.message


@pytest.mark.parametrize("name", WIRES)
def test_non_object_tool_arguments_are_a_provider_error(name: str) -> None:
    with FakeLLMServer([Turn(tool_calls=[ToolCall("Write", "[1, 2]")])]) as server:
        error = error_of(provider(name, server), request())
    assert error.code == "provider_error"


@pytest.mark.parametrize("name", WIRES)
def test_stopping_mid_stream_then_calling_again(name: str) -> None:
    """A consumer that stops reading (the agent's `stop`) closes the stream;
    the same provider serves the next call."""
    turns = [Turn(text="a" * 40, delta_size=1, delta_delay=0.01), Turn(text="next")]

    async def scenario(p: Provider) -> str:
        stream_ = p.stream(request())
        async for event in stream_:
            if isinstance(event, TextDelta):
                break
        await stream_.aclose()  # type: ignore[attr-defined]
        texts = [e.text async for e in p.stream(request()) if isinstance(e, TextDelta)]
        await p.aclose()  # type: ignore[attr-defined]
        return "".join(texts)

    with FakeLLMServer(turns) as server:
        assert asyncio.run(scenario(provider(name, server))) == "next"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(min_size=1, max_size=60).filter(lambda t: t.strip() != ""),
    size=st.integers(1, 7),
    name=st.sampled_from(WIRES),
)
def test_any_text_in_any_delta_size_reassembles_exactly(text: str, size: int, name: str) -> None:
    with FakeLLMServer([Turn(text=text, delta_size=size)]) as server:
        events, response = stream(provider(name, server), request())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == text
    assert response.content == [TextBlock(text)]
