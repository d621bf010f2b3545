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


def test_each_call_to_a_loopback_server_opens_its_own_connection() -> None:
    """llama.cpp's server can drop a kept-alive connection as the next request
    arrives on it (docs/llm.md); for a server on this machine a connection per
    call costs nothing and never meets that. The raw SDK, for contrast, keeps
    the connection (so the fake does keep connections alive)."""
    import openai

    async def raw(base_url: str) -> None:
        client = openai.AsyncOpenAI(api_key="k", base_url=base_url + "/v1", max_retries=0)
        try:
            for _ in range(2):
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
        finally:
            await client.close()

    with FakeLLMServer([Turn(text="a")] * 6) as server:
        for name in ("local", "openai"):
            provider = create_provider(name, base_url=server.base_url, model="m", env={})

            async def twice(provider: Any = provider) -> None:
                try:
                    for _ in range(2):
                        [e async for e in provider.stream(HI)]
                finally:
                    await provider.aclose()

            asyncio.run(twice())
        asyncio.run(raw(server.base_url))
        peers = [r.peer for r in server.received]
    assert len(set(peers[:4])) == 4  # local twice, openai twice: four connections
    assert peers[4] == peers[5]  # the SDK's own client reuses its connection
