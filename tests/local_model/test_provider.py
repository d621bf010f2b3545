"""The `local` and `openai` providers (the real `openai` SDK) against the
real llama.cpp server: what the server sends, as flightdeck reads it."""

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
    TextDelta,
    ToolCallReady,
    ToolSpec,
    create_provider,
)
from tests.local_model.conftest import LocalServer

READ = ToolSpec(
    "Read",
    "Read a file",
    {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
)


def ask(text: str, *, max_tokens: int = 16, tools: list[ToolSpec] | None = None) -> Request:
    return Request(
        model="", messages=[Message("user", [TextBlock(text)])], max_tokens=max_tokens,
        tools=tools or [],
    )  # fmt: skip


def events_of(provider: Any, request: Request) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return [event async for event in provider.stream(request)]
        finally:
            await provider.aclose()

    return asyncio.run(asyncio.wait_for(go(), 120))


@pytest.mark.parametrize("name", ["local", "openai"])
def test_text_streams_in_deltas_and_ends_with_usage_and_stop(llama: LocalServer, name: str) -> None:
    """No key is needed for a loopback server, with either provider."""
    provider = create_provider(name, base_url=llama.v1, env={})
    events = events_of(provider, ask("Write a sentence about rain.", max_tokens=12))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert isinstance(done, StreamDone) and len(deltas) >= 2
    assert done.response.content == [TextBlock("".join(deltas))]
    assert done.response.stop_reason == "max_tokens"  # finish_reason length
    assert done.response.usage.output_tokens == 12


def test_local_auto_model_is_the_one_the_server_lists(llama: LocalServer) -> None:
    provider = create_provider("local", env={"FLIGHTDECK_LOCAL_SERVERS": llama.v1})
    events_of(provider, ask("Hi", max_tokens=2))
    assert provider.model.endswith(".gguf")  # llama.cpp lists the file it serves


def test_no_server_is_a_retryable_connection_error_naming_the_addresses() -> None:
    env = {"FLIGHTDECK_LOCAL_SERVERS": "http://127.0.0.1:1/v1 http://127.0.0.1:2/v1"}
    with pytest.raises(ProviderError) as caught:
        events_of(create_provider("local", env=env), ask("Hi"))
    assert caught.value.code == "connection_error" and caught.value.retryable
    assert "127.0.0.1:1/v1" in caught.value.message and "127.0.0.1:2/v1" in caught.value.message


def test_a_prompt_over_the_context_is_context_too_long(llama: LocalServer) -> None:
    provider = create_provider("local", base_url=llama.v1, env={})
    with pytest.raises(ProviderError) as caught:
        events_of(provider, ask("word " * 3000))
    assert caught.value.code == "context_too_long" and caught.value.status == 400
    assert not caught.value.retryable


def test_a_forced_call_arrives_in_fragments_and_is_assembled(llama: LocalServer) -> None:
    """llama.cpp streams a call's arguments a token at a time, and more calls
    than asked for; with parallel_tool_calls false the first is kept."""
    provider = create_provider(
        "local", base_url=llama.v1, env={},
        options={"tool_choice": "required", "parallel_tool_calls": False},
    )  # fmt: skip
    events = events_of(provider, ask("Read the file notes.txt", max_tokens=96, tools=[READ]))
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert len(calls) == 1 and calls[0].name == "Read"
    assert calls[0].input == {"file_path": "notes.txt"} and calls[0].id
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response.content[-1] == calls[0]


def test_a_call_cut_at_the_token_limit_is_a_clear_error_not_a_retry(llama: LocalServer) -> None:
    provider = create_provider(
        "local", base_url=llama.v1, env={}, options={"tool_choice": "required"}
    )
    with pytest.raises(ProviderError) as caught:
        events_of(provider, ask("Read the file notes.txt", max_tokens=28, tools=[READ]))
    assert caught.value.code == "provider_error" and not caught.value.retryable
    assert "cut off at the output token limit" in caught.value.message
