"""The `local` provider's search for its server, on the loopback fake (which,
like some servers, lists no models): the paths the real-server tier
(tests/local_model) does not take."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from flightdeck.llm import Message, ProviderError, Request, StreamDone, TextBlock, create_provider
from tests.fakes import FakeLLMServer, Turn

HI = Request(model="", messages=[Message("user", [TextBlock("hi")])])


def run(provider: Any) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return [e async for e in provider.stream(HI)]
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_a_named_server_and_model_are_used_as_given_with_no_key() -> None:
    with FakeLLMServer([Turn(text="hello")]) as server:
        provider = create_provider("local", base_url=server.base_url, model="m", env={})
        events = run(provider)
        sent = server.received
    assert isinstance(events[-1], StreamDone) and provider.name == "local"
    assert [r.path for r in sent] == ["/v1/chat/completions"]  # nothing asked first
    assert server.requests[0]["model"] == "m" and "max_tokens" in server.requests[0]


def test_a_named_server_that_lists_no_models_needs_a_model_name() -> None:
    with FakeLLMServer([Turn(text="hello")]) as server:
        provider = create_provider("local", base_url=server.base_url + "/v1", env={})
        with pytest.raises(ProviderError) as caught:
            run(provider)
    assert caught.value.code == "config_error" and "--model" in caught.value.message


def test_the_environment_names_the_server() -> None:
    with FakeLLMServer([Turn(text="hello")]) as server:
        env = {"FLIGHTDECK_LOCAL_BASE_URL": server.base_url + "/v1"}
        events = run(create_provider("local", model="m", env=env))
    assert isinstance(events[-1], StreamDone)
