"""ScriptedProvider: a real Provider playing scripted turns in memory."""

from __future__ import annotations

import asyncio

import pytest

from flightdeck.llm import (
    Provider,
    ProviderError,
    Request,
    ScriptedProvider,
    ScriptedTurn,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolUseBlock,
    Usage,
    complete,
)
from tests.llm._helpers import error_of, events_of, request, stream


def test_is_a_provider_and_records_requests() -> None:
    provider = ScriptedProvider(["hello"])
    assert isinstance(provider, Provider)
    req = request("question")
    _, response = stream(provider, req)
    assert provider.requests == [req]
    assert response.content == [TextBlock("hello")]


def test_text_thinking_and_tool_calls_in_order() -> None:
    turn = ScriptedTurn(
        text="abcd",
        thinking="hm",
        chunk_size=2,
        tool_calls=[("Read", {"file_path": "a"}), ToolUseBlock("given", "Bash", {})],
    )
    events, response = stream(ScriptedProvider([turn]), request())
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ThinkingDelta", "TextDelta", "TextDelta", "ToolCallReady", "ToolCallReady",
                     "StreamDone"]  # fmt: skip
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert calls[0].id.startswith("toolu_scripted_") and calls[1].id == "given"
    assert response.stop_reason == "tool_use"
    assert [e.text for e in events if isinstance(e, ThinkingDelta | TextDelta)] == [
        "hm",
        "ab",
        "cd",
    ]


def test_error_turn_raises_the_error() -> None:
    boom = ProviderError("rate_limited", "slow down", retryable=True)
    assert error_of(ScriptedProvider([ScriptedTurn(error=boom)]), request()) is boom


def test_cut_after_raises_stream_interrupted_after_events() -> None:
    provider = ScriptedProvider([ScriptedTurn(text="abcdef", chunk_size=1, cut_after=2)])
    seen: list[object] = []

    async def run() -> None:
        async for event in provider.stream(request()):
            seen.append(event)

    with pytest.raises(ProviderError) as info:
        asyncio.run(run())
    assert info.value.code == "stream_interrupted" and len(seen) == 2


def test_function_turns_see_the_request() -> None:
    def echo(req: Request) -> ScriptedTurn:
        last = req.messages[-1].content[0]
        assert isinstance(last, TextBlock)
        return ScriptedTurn(text=last.text.upper(), usage=Usage(1, 2))

    _, response = stream(ScriptedProvider([echo]), request("shout"))
    assert response.content == [TextBlock("SHOUT")] and response.usage == Usage(1, 2)


def test_exhausted_script_answers_done() -> None:
    provider = ScriptedProvider([])
    [events] = events_of(provider, request())
    assert events[0] == TextDelta("done") and provider.remaining == 0


def test_complete_returns_the_final_response() -> None:
    response = asyncio.run(complete(ScriptedProvider(["x"]), request()))
    assert response.content == [TextBlock("x")]
