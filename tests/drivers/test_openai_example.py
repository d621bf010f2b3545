"""The example openai-sdk driver (constructor pattern over the real `openai` package),
exercised against the fake OpenAI server on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.drivers import DriverCallError, call_tool, load_driver, stream_tool
from tests.fakes import FakeLLMServer, Turn

DRIVER = Path(__file__).resolve().parents[2] / "examples" / "drivers" / ".drivers" / "openai-sdk"
KEY = "sk-canary-0d1e2f3a4b5c"
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url + "/v1")
        yield srv


def test_constructor_pattern_over_openai_calls_the_fake_server(server: FakeLLMServer) -> None:
    server.add(Turn(text="hi from the fake"))
    driver = load_driver(DRIVER, environ={"OPENAI_API_KEY": KEY})
    result = asyncio.run(
        call_tool("chat.completion", {"messages": MESSAGES, "temperature": 0.2}, driver=driver)
    )
    assert result.output == "hi from the fake"
    (body,) = server.requests
    assert body["model"] == "gpt-4o-mini"  # default('gpt-4o-mini')
    assert body["messages"] == MESSAGES
    assert body["temperature"] == 0.2
    assert body["stream"] is False
    assert server.received[0].headers.get("authorization") == f"Bearer {KEY}"


def test_one_client_per_driver_is_reused_across_calls(server: FakeLLMServer) -> None:
    server.add(Turn(text="one"), Turn(text="two"))
    driver = load_driver(DRIVER, environ={"OPENAI_API_KEY": KEY})
    fn = driver.bindings["chat.completion"].ref.function
    outputs = [
        asyncio.run(call_tool("chat.completion", {"messages": MESSAGES}, driver=driver)).output
        for _ in range(2)
    ]
    assert outputs == ["one", "two"]
    assert driver._function(driver.bindings["chat.completion"], {}) is fn


def test_sdk_exception_is_wrapped_and_the_key_never_shows(server: FakeLLMServer) -> None:
    wrong = "sk-wrong-canary-99887766"
    driver = load_driver(DRIVER, environ={"OPENAI_API_KEY": wrong})
    with pytest.raises(DriverCallError) as info:
        asyncio.run(call_tool("chat.completion", {"messages": MESSAGES}, driver=driver))
    assert info.value.code == "driver_call_failed"
    assert info.value.details["exception_type"] == "openai.AuthenticationError"
    assert info.value.details["auth_expired"] is True  # auth.expiry.detect matched
    assert info.value.hint is not None and "OPENAI_API_KEY" in info.value.hint
    assert wrong not in str(info.value.to_dict())


def test_input_is_validated_before_any_request(server: FakeLLMServer) -> None:
    driver = load_driver(DRIVER, environ={"OPENAI_API_KEY": KEY})
    with pytest.raises(DriverCallError, match="input_invalid"):
        asyncio.run(call_tool("chat.completion", {"messages": []}, driver=driver))
    assert server.requests == []


STREAM_DRIVER = DRIVER.parent / "openai-stream-sdk"


def test_streaming_over_the_async_client_yields_text_deltas(server: FakeLLMServer) -> None:
    server.add(Turn(text="streamed answer here", delta_size=4))
    driver = load_driver(STREAM_DRIVER, environ={"OPENAI_API_KEY": KEY})
    assert driver.bindings["chat.stream"].is_async  # unwrapped through openai's decorator

    async def go() -> list[str]:
        return [c async for c in stream_tool("chat.stream", {"messages": MESSAGES}, driver=driver)]

    chunks = [c for c in asyncio.run(go()) if c]  # the role-only first delta is ""
    assert chunks == ["stre", "amed", " ans", "wer ", "here"]
    assert server.requests[0]["stream"] is True


def test_stopping_an_sdk_stream_early_ends_the_call_cleanly(server: FakeLLMServer) -> None:
    server.add(Turn(text="x" * 400, delta_size=1, delta_delay=0.002))
    driver = load_driver(STREAM_DRIVER, environ={"OPENAI_API_KEY": KEY})
    closed: list[bool] = []

    async def go() -> list[str]:
        out: list[str] = []
        agen = stream_tool("chat.stream", {"messages": MESSAGES}, driver=driver)
        async for chunk in agen:
            if chunk:
                out.append(chunk)
            if len(out) == 3:
                break
        await agen.aclose()  # type: ignore[attr-defined]
        closed.append(True)
        return out

    assert asyncio.run(go()) == ["x", "x", "x"]
    assert closed == [True]
