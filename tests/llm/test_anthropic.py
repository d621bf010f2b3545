"""The anthropic provider against FakeLLMServer, each test on both of its
paths: through the real Anthropic SDK, and the express path (httpx2 alone,
taken while the SDK is not imported)."""

from __future__ import annotations

import asyncio

import pytest

from flightdeck.llm import (
    AnthropicProvider,
    ImageBlock,
    Message,
    Request,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallReady,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    _anthropic,
    create_provider,
)
from tests.fakes import FakeLLMServer, ToolCall, Turn
from tests.llm._helpers import error_of, events_of, request, stream


@pytest.fixture(autouse=True, params=["sdk", "express"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(_anthropic, "sdk_ready", lambda: request.param == "sdk")
    return str(request.param)


def provider(server: FakeLLMServer, **options: object) -> AnthropicProvider:
    p = create_provider("anthropic", api_key="k", base_url=server.base_url, options=options)
    assert isinstance(p, AnthropicProvider)
    return p


def test_text_streams_as_deltas_and_ends_in_response() -> None:
    with FakeLLMServer([Turn(text="Hello world", delta_size=3)]) as server:
        events, response = stream(provider(server), request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo ", "wor", "ld"]
    assert response.content == [TextBlock("Hello world")]
    assert response.stop_reason == "end_turn"
    assert response.model == "test-model"


def test_thinking_budget_enables_extended_thinking() -> None:
    with FakeLLMServer([Turn(thinking="let me see", text="ok")]) as server:
        events, response = stream(provider(server), request(thinking_budget=2048, max_tokens=100))
        sent = server.requests[0]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["max_tokens"] > 2048  # the API requires max_tokens above the budget
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "let me see"
    assert response.content[0] == ThinkingBlock("let me see", "sig_10_fake")
    assert response.content[1] == TextBlock("ok")


def test_temperature_dropped_with_thinking_kept_without() -> None:
    with FakeLLMServer() as server:
        events_of(
            provider(server),
            request(temperature=0.2, thinking_budget=1024),
            request(temperature=0.2),
        )
        first, second = server.requests
    assert "temperature" not in first
    assert second["temperature"] == 0.2


def test_one_tool_call_is_ready_with_parsed_input() -> None:
    call = ToolCall("Write", {"file_path": "a.txt", "content": "x" * 40})
    with FakeLLMServer([Turn(text="Writing.", tool_calls=[call])]) as server:
        events, response = stream(provider(server), request())
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert len(ready) == 1
    assert ready[0].name == "Write" and ready[0].input == call.input
    assert ready[0].id.startswith("toolu_")
    assert response.stop_reason == "tool_use"
    assert response.content == [TextBlock("Writing."), ready[0]]


def test_several_tool_calls_in_one_turn() -> None:
    calls = [
        ToolCall("Read", {"file_path": "a"}),
        ToolCall("Read", {"file_path": "b"}),
        ToolCall("Glob", {}),
    ]
    with FakeLLMServer([Turn(tool_calls=calls)]) as server:
        events, response = stream(provider(server), request())
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.input) for c in ready] == [(c.name, c.input) for c in calls]
    assert len({c.id for c in ready}) == 3
    assert response.content == ready


def test_usage_is_per_call_with_cache_tokens() -> None:
    turns = [
        Turn(text="a", usage={"input_tokens": 5, "output_tokens": 7, "cache_write_tokens": 900}),
        Turn(text="b", usage={"input_tokens": 3, "output_tokens": 2, "cache_read_tokens": 900}),
    ]
    with FakeLLMServer(turns) as server:
        first, second = events_of(provider(server), request(), request())
    assert first[-1].response.usage == Usage(5, 7, 0, 900)  # type: ignore[union-attr]
    assert second[-1].response.usage == Usage(3, 2, 900, 0)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (429, "rate_limited", True),
        (500, "server_error", True),
        (529, "server_error", True),
        (401, "auth_error", False),
        (403, "auth_error", False),
        (400, "bad_request", False),
        (404, "bad_request", False),
    ],
)
def test_http_errors_map_to_codes(status: int, code: str, retryable: bool) -> None:
    with FakeLLMServer([Turn(error=status)]) as server:
        error = error_of(provider(server), request())
        assert len(server.requests) == 1  # the SDK did not retry on its own
    assert (error.code, error.retryable, error.status) == (code, retryable, status)


def test_rate_limit_carries_retry_after() -> None:
    with FakeLLMServer([Turn(error=429)]) as server:
        error = error_of(provider(server), request())
    assert error.retry_after == 0


def test_prompt_too_long_is_context_too_long() -> None:
    message = "prompt is too long: 210000 tokens > 200000 maximum"
    with FakeLLMServer([Turn(error=400, error_message=message)]) as server:
        error = error_of(provider(server), request())
    assert error.code == "context_too_long" and not error.retryable
    assert "210000" in error.message


def test_wrong_key_is_auth_error() -> None:
    with FakeLLMServer(api_key="right") as server:
        p = create_provider("anthropic", api_key="wrong", base_url=server.base_url)
        error = error_of(p, request())
    assert error.code == "auth_error" and error.status == 401


@pytest.mark.parametrize("cut", [1, 3, 6])
def test_stream_cut_midway_is_stream_interrupted(cut: int) -> None:
    with FakeLLMServer([Turn(text="abcdefghijkl", cut_after=cut)]) as server:
        error = error_of(provider(server), request())
    assert error.code == "stream_interrupted" and error.retryable


def test_overloaded_event_inside_stream_is_retryable_server_error() -> None:
    turn = Turn(text="abcdef", cut_after=3, stream_error="overloaded_error")
    with FakeLLMServer([turn]) as server:
        error = error_of(provider(server), request())
    assert error.code == "server_error" and error.retryable


def test_nothing_listening_is_connection_error() -> None:
    with FakeLLMServer() as server:
        url = server.base_url
    error = error_of(create_provider("anthropic", api_key="k", base_url=url), request())
    assert error.code == "connection_error" and error.retryable


def test_base_url_from_environment() -> None:
    with FakeLLMServer([Turn(text="via env")]) as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.base_url}
        _, response = stream(create_provider("anthropic", env=env), request())
        headers = server.received[0].headers
        # SDK versions differ: x-api-key, or the key as a bearer token.
        assert headers.get("x-api-key") == "k" or headers.get("authorization") == "Bearer k"
    assert response.content == [TextBlock("via env")]


def test_empty_request_model_uses_provider_model() -> None:
    with FakeLLMServer() as server:
        p = create_provider("anthropic", api_key="k", base_url=server.base_url, model="claude-x")
        stream(p, request(model=""))
        assert server.requests[0]["model"] == "claude-x"


def test_cancelling_a_waiting_call_raises_cancelled_not_provider_error() -> None:
    async def scenario(p: AnthropicProvider, server: FakeLLMServer) -> None:
        async def consume() -> None:
            async for _ in p.stream(request()):
                pass

        task = asyncio.create_task(consume())
        # Cancel only once the request is really waiting on the server (not before it left).
        deadline = asyncio.get_running_loop().time() + 30
        while not server.requests:
            assert not task.done() and asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await p.aclose()

    with FakeLLMServer([Turn(text="late", delay=30)]) as server:
        asyncio.run(scenario(provider(server), server))
        assert len(server.requests) == 1  # cancelled, not retried


# ---- request mapping --------------------------------------------------------

TOOLS = [
    ToolSpec("Read", "Read a file", {"type": "object", "properties": {}}),
    ToolSpec("Write", "Write a file", {"type": "object", "properties": {}}),
]
PNG = ImageBlock("image/png", "iVBORw0KGgo=")


def _conversation() -> Request:
    return Request(
        model="m",
        system="You are careful.",
        tools=TOOLS,
        messages=[
            Message("user", [TextBlock("look at this"), PNG]),
            Message(
                "assistant",
                [
                    ThinkingBlock("hmm", "sig"),
                    ThinkingBlock("unsigned from elsewhere"),
                    TextBlock(""),
                    ToolUseBlock("toolu_1", "Read", {"file_path": "a.png"}),
                ],
            ),
            Message(
                "user",
                [ToolResultBlock("toolu_1", [TextBlock("bytes"), PNG], is_error=True)],
            ),
        ],
    )


def test_request_mapping_and_cache_breakpoints() -> None:
    with FakeLLMServer() as server:
        stream(provider(server), _conversation())
        sent = server.requests[0]
    cache = {"type": "ephemeral"}
    assert sent["system"] == [{"type": "text", "text": "You are careful.", "cache_control": cache}]
    assert [t["name"] for t in sent["tools"]] == ["Read", "Write"]
    assert "cache_control" not in sent["tools"][0] and sent["tools"][1]["cache_control"] == cache
    first, assistant, result = sent["messages"]
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert first == {"role": "user", "content": [{"type": "text", "text": "look at this"}, image]}
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.png"}},
    ]
    assert result["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "is_error": True,
            "content": [{"type": "text", "text": "bytes"}, image],
            "cache_control": cache,
        }
    ]


def test_prompt_caching_can_be_turned_off() -> None:
    with FakeLLMServer() as server:
        stream(provider(server, prompt_caching=False), _conversation())
    assert "cache_control" not in str(server.requests[0])


def test_redacted_thinking_round_trips() -> None:
    req = Request(
        model="m",
        messages=[Message("assistant", [ThinkingBlock("opaque", redacted=True)])],
    )
    with FakeLLMServer() as server:
        stream(provider(server), req)
    assert server.requests[0]["messages"][0]["content"] == [
        {"type": "redacted_thinking", "data": "opaque"}
    ]


def test_stream_ending_cleanly_before_message_stop_is_stream_interrupted() -> None:
    with FakeLLMServer([Turn(text="abcdefgh", cut_after=4, clean_cut=True)]) as server:
        error = error_of(provider(server), request())
    assert error.code == "stream_interrupted" and error.retryable


def test_slow_server_is_timeout() -> None:
    with FakeLLMServer([Turn(text="late", delay=30)]) as server:
        error = error_of(provider(server, timeout=0.2), request())
    assert error.code == "timeout" and error.retryable
