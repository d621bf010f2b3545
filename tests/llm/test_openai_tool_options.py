"""`tool_choice`, `parallel_tool_calls` and answers cut at the token limit, on
the OpenAI wire (the real SDK against the loopback fake): the rules the
local-model tier found necessary, pinned without a model server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from flightdeck.llm import (
    Message,
    ProviderError,
    Request,
    StreamDone,
    TextBlock,
    ToolCallReady,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    create_provider,
)
from flightdeck.llm._openai_request import openai_params
from tests.fakes import FakeLLMServer, ToolCall, Turn

READ = ToolSpec("Read", "Read a file", {"type": "object", "properties": {}})


def request(*messages: Message, tools: bool = True) -> Request:
    return Request(model="", messages=list(messages), tools=[READ] if tools else [])


USER = Message("user", [TextBlock("read it")])
ASKED = Message("assistant", [ToolUseBlock("c1", "Read", {})])
ANSWERED = Message("user", [ToolResultBlock("c1", [TextBlock("text")])])
FORCED = {"tool_choice": "required", "parallel_tool_calls": False}


def params(req: Request) -> dict[str, Any]:
    return openai_params(req, "m", max_tokens_field="max_tokens", extra=dict(FORCED))


def test_a_forced_choice_holds_for_the_first_call_of_a_turn_only() -> None:
    assert params(request(USER))["tool_choice"] == "required"
    after = params(request(USER, ASKED, ANSWERED))
    assert "tool_choice" not in after and after["parallel_tool_calls"] is False


def test_no_tools_no_tool_options() -> None:
    sent = params(request(USER, tools=False))
    assert "tool_choice" not in sent and "parallel_tool_calls" not in sent


@pytest.mark.parametrize(
    ("option", "value"), [("tool_choice", "always"), ("parallel_tool_calls", "no")]
)
def test_a_bad_value_is_a_config_error_at_creation(option: str, value: str) -> None:
    for name in ("openai", "local"):
        with pytest.raises(ProviderError) as caught:
            create_provider(name, base_url="http://127.0.0.1:9/v1", env={}, options={option: value})
        assert caught.value.code == "config_error" and option in caught.value.message


def stream(server: FakeLLMServer, options: dict[str, Any]) -> list[Any]:
    provider = create_provider("openai", base_url=server.base_url + "/v1", env={}, options=options)

    async def go() -> list[Any]:
        try:
            return [e async for e in provider.stream(request(USER))]
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_a_server_that_ignores_parallel_false_has_its_later_calls_dropped() -> None:
    calls = [ToolCall("Read", {"file_path": "a"}), ToolCall("Read", {"file_path": "b"})]
    with FakeLLMServer([Turn(tool_calls=calls)] * 2) as server:
        one = stream(server, {"parallel_tool_calls": False})
        both = stream(server, {})
        sent = server.requests[0]
    assert [e.call.input for e in one if isinstance(e, ToolCallReady)] == [{"file_path": "a"}]
    assert len([e for e in both if isinstance(e, ToolCallReady)]) == 2
    assert sent["parallel_tool_calls"] is False


def test_an_answer_cut_at_the_limit_keeps_its_whole_calls_and_drops_the_cut_one() -> None:
    calls = [ToolCall("Read", {"file_path": "a"}), ToolCall("Read", '{"file_pa')]
    with FakeLLMServer([Turn(tool_calls=calls, stop_reason="max_tokens")]) as server:
        events = stream(server, {})
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response.stop_reason == "max_tokens"
    assert [b.input for b in done.response.content if isinstance(b, ToolUseBlock)] == [
        {"file_path": "a"}
    ]


def test_a_lone_call_cut_at_the_limit_is_an_error_that_says_so() -> None:
    calls = [ToolCall("Read", '{"file_pa')]
    with (
        FakeLLMServer([Turn(tool_calls=calls, stop_reason="max_tokens")]) as server,
        pytest.raises(ProviderError) as caught,
    ):
        stream(server, {})
    assert caught.value.code == "provider_error" and not caught.value.retryable
    assert "cut off at the output token limit" in caught.value.message


def test_a_cut_call_without_the_limit_is_still_retryable() -> None:
    """Invalid arguments in an answer that finished normally: the model may
    do better on a second try."""
    with (
        FakeLLMServer([Turn(tool_calls=[ToolCall("Read", '{"file_pa')])]) as server,
        pytest.raises(ProviderError) as caught,
    ):
        stream(server, {})
    assert caught.value.retryable and "invalid JSON arguments" in caught.value.message
