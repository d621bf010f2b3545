"""The openai provider through the real OpenAI SDK against FakeLLMServer."""

from __future__ import annotations

import pytest

from flightdeck.llm import (
    ImageBlock,
    Message,
    OpenAIProvider,
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
    create_provider,
)
from tests.fakes import FakeLLMServer, ToolCall, Turn
from tests.llm._helpers import error_of, events_of, request, stream


def provider(server: FakeLLMServer, **options: object) -> OpenAIProvider:
    url = server.base_url + "/v1"
    p = create_provider("openai", api_key="k", base_url=url, options=options)
    assert isinstance(p, OpenAIProvider)
    return p


def test_text_streams_as_deltas_and_ends_in_response() -> None:
    with FakeLLMServer([Turn(text="Hello world", delta_size=5)]) as server:
        events, response = stream(provider(server), request())
        sent = server.requests[0]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " worl", "d"]
    assert response.content == [TextBlock("Hello world")]
    assert response.stop_reason == "end_turn"
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


def test_reasoning_content_becomes_thinking() -> None:
    with FakeLLMServer([Turn(thinking="step by step", text="42")]) as server:
        events, response = stream(provider(server), request())
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "step by step"
    assert response.content == [ThinkingBlock("step by step"), TextBlock("42")]


def test_parallel_tool_calls_accumulate_by_index() -> None:
    calls = [ToolCall("Read", {"file_path": "a" * 30}), ToolCall("Bash", {"command": "ls -la"})]
    with FakeLLMServer([Turn(text="Both.", tool_calls=calls)]) as server:
        events, response = stream(provider(server), request())
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.input) for c in ready] == [(c.name, c.input) for c in calls]
    assert all(c.id.startswith("call_") for c in ready)
    assert response.stop_reason == "tool_use"
    assert response.content == [TextBlock("Both."), *ready]


def test_usage_counts_cached_tokens_as_cache_reads() -> None:
    turns = [
        Turn(text="a", usage={"input_tokens": 20, "output_tokens": 4, "cache_read_tokens": 1000})
    ]
    with FakeLLMServer(turns) as server:
        _, response = stream(provider(server), request())
    # prompt_tokens = 1020 of which 1000 cached: input_tokens is the uncached rest.
    assert response.usage == Usage(20, 4, 1000, 0)


def test_max_tokens_stop_reason() -> None:
    with FakeLLMServer([Turn(text="trunc", stop_reason="max_tokens")]) as server:
        _, response = stream(provider(server), request())
    assert response.stop_reason == "max_tokens"


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (429, "rate_limited", True),
        (500, "server_error", True),
        (503, "server_error", True),
        (401, "auth_error", False),
        (400, "bad_request", False),
    ],
)
def test_http_errors_map_to_codes(status: int, code: str, retryable: bool) -> None:
    with FakeLLMServer([Turn(error=status)]) as server:
        error = error_of(provider(server), request())
        assert len(server.requests) == 1  # the SDK did not retry on its own
    assert (error.code, error.retryable, error.status) == (code, retryable, status)


def test_context_length_is_context_too_long() -> None:
    message = "This model's maximum context length is 128000 tokens. However, you requested 130000."
    with FakeLLMServer([Turn(error=400, error_message=message)]) as server:
        error = error_of(provider(server), request())
    assert error.code == "context_too_long" and not error.retryable


def test_wrong_key_is_auth_error() -> None:
    with FakeLLMServer(api_key="right") as server:
        url = server.base_url + "/v1"
        error = error_of(create_provider("openai", api_key="wrong", base_url=url), request())
    assert error.code == "auth_error"


@pytest.mark.parametrize("cut", [1, 2, 4])
def test_stream_cut_midway_is_stream_interrupted(cut: int) -> None:
    with FakeLLMServer([Turn(text="abcdefghijkl", cut_after=cut)]) as server:
        error = error_of(provider(server), request())
    assert error.code == "stream_interrupted" and error.retryable


def test_error_chunk_inside_stream_is_retryable_server_error() -> None:
    turn = Turn(text="abcdef", cut_after=2, stream_error="server_error")
    with FakeLLMServer([turn]) as server:
        error = error_of(provider(server), request())
    assert error.code == "server_error" and error.retryable


def test_nothing_listening_is_connection_error() -> None:
    with FakeLLMServer() as server:
        url = server.base_url + "/v1"
    error = error_of(create_provider("openai", api_key="k", base_url=url), request())
    assert error.code == "connection_error" and error.retryable


def test_base_url_from_environment_needs_no_key() -> None:
    """A local OpenAI-compatible server: OPENAI_BASE_URL alone is enough."""
    with FakeLLMServer([Turn(text="local")]) as server:
        env = {"OPENAI_BASE_URL": server.base_url + "/v1"}
        _, response = stream(create_provider("openai", env=env, model="llama"), request(model=""))
        sent = server.requests[0]
    assert response.content == [TextBlock("local")]
    assert sent["model"] == "llama"
    assert sent["max_tokens"] == 4096  # compatible servers get the classic field


def test_max_tokens_field_option() -> None:
    with FakeLLMServer() as server:
        stream(provider(server, max_tokens_field="max_completion_tokens"), request())
        assert server.requests[0]["max_completion_tokens"] == 4096


def test_request_mapping() -> None:
    png = ImageBlock("image/png", "iVBORw0KGgo=")
    req = Request(
        model="m",
        system="Be brief.",
        temperature=0.5,
        tools=[ToolSpec("Read", "Read a file", {"type": "object"})],
        messages=[
            Message("user", [TextBlock("what is in"), png]),
            Message(
                "assistant",
                [
                    ThinkingBlock("hm"),
                    TextBlock("Reading."),
                    ToolUseBlock("call_1", "Read", {"file_path": "x.png"}),
                    ToolUseBlock("call_2", "Read", {"file_path": "y"}),
                ],
            ),
            Message(
                "user",
                [
                    ToolResultBlock("call_1", [png]),
                    ToolResultBlock("call_2", [TextBlock("nope")], is_error=True),
                    TextBlock("and now?"),
                ],
            ),
        ],
    )
    with FakeLLMServer() as server:
        stream(provider(server), req)
        sent = server.requests[0]
    url = "data:image/png;base64,iVBORw0KGgo="
    image_part = {"type": "image_url", "image_url": {"url": url}}
    assert sent["temperature"] == 0.5
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file",
                "parameters": {"type": "object"},
            },
        }
    ]
    system, first, assistant, tool1, image_msg, tool2, last = sent["messages"]
    assert system == {"role": "system", "content": "Be brief."}
    assert first == {
        "role": "user",
        "content": [{"type": "text", "text": "what is in"}, image_part],
    }
    assert assistant["content"] == "Reading."
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [
        '{"file_path": "x.png"}',
        '{"file_path": "y"}',
    ]
    assert tool1["role"] == "tool" and tool1["tool_call_id"] == "call_1"
    assert image_msg["role"] == "user" and image_msg["content"][1] == image_part
    assert tool2 == {"role": "tool", "tool_call_id": "call_2", "content": "Error: nope"}
    assert last == {"role": "user", "content": "and now?"}


def test_two_calls_have_separate_usage() -> None:
    turns = [
        Turn(text="a", usage={"input_tokens": 1, "output_tokens": 1}),
        Turn(text="b", usage={"input_tokens": 2, "output_tokens": 2}),
    ]
    with FakeLLMServer(turns) as server:
        first, second = events_of(provider(server), request(), request())
    assert first[-1].response.usage == Usage(1, 1)  # type: ignore[union-attr]
    assert second[-1].response.usage == Usage(2, 2)  # type: ignore[union-attr]


def test_stream_ending_cleanly_before_finish_is_stream_interrupted() -> None:
    with FakeLLMServer([Turn(text="abcdefgh", cut_after=2, clean_cut=True)]) as server:
        error = error_of(provider(server), request())
    assert error.code == "stream_interrupted" and error.retryable


def test_slow_server_is_timeout() -> None:
    with FakeLLMServer([Turn(text="late", delay=30)]) as server:
        error = error_of(provider(server, timeout=0.2), request())
    assert error.code == "timeout" and error.retryable


def test_reasoning_effort_option_is_sent() -> None:
    with FakeLLMServer() as server:
        stream(provider(server, reasoning_effort="low"), request())
        assert server.requests[0]["reasoning_effort"] == "low"
