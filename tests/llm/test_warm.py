"""`flightdeck.llm.warm`: the provider SDK imports in a background thread."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys

import pytest

from flightdeck.llm import AnthropicProvider, ScriptedProvider, TextDelta, sdk_modules, warm
from tests.fakes import FakeLLMServer, Turn
from tests.llm._helpers import error_of, request, stream

_PROBE = """
import sys
from flightdeck.llm import AnthropicProvider, warm
provider = AnthropicProvider("anthropic", "m", lambda: None)
before = "anthropic" in sys.modules
thread = warm(provider)
assert thread is not None and thread.daemon
thread.join(60)
print(before, "anthropic" in sys.modules, "anthropic.types" in sys.modules)
"""


def test_warm_imports_the_sdk_off_the_calling_thread() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["False", "True", "True"]


def test_a_provider_without_an_sdk_starts_no_thread() -> None:
    provider = ScriptedProvider([])
    assert sdk_modules(provider) == ()
    assert warm(provider) is None


def _counting_anthropic(server: FakeLLMServer, built: list[object]) -> AnthropicProvider:
    def factory() -> object:
        import anthropic

        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url)
        built.append(client)
        return client

    return AnthropicProvider("anthropic", "m", factory)


def test_warm_builds_the_client_that_the_first_call_then_uses() -> None:
    built: list[object] = []
    with FakeLLMServer([Turn(text="hello")]) as server:
        provider = _counting_anthropic(server, built)
        thread = warm(provider)
        assert thread is not None
        thread.join(60)
        assert len(built) == 1  # built off the caller's thread, before any call
        events, _ = stream(provider, request())
    assert len(built) == 1  # the first call used it instead of building another
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello"


def test_warm_leaves_the_collector_as_it_found_it() -> None:
    provider = AnthropicProvider("anthropic", "m", lambda: object())
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            thread = warm(provider)
            assert thread is not None
            thread.join(60)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


# The warm-up thread must not die of it either (pytest reports that as a warning).
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_factory_that_fails_in_the_warm_up_fails_the_first_call_instead() -> None:
    calls: list[int] = []

    def factory() -> object:
        calls.append(1)
        raise ValueError("no credentials here")

    provider = AnthropicProvider("anthropic", "m", factory)
    thread = warm(provider)
    assert thread is not None
    thread.join(60)  # the warm-up swallowed it: nothing was asked for yet
    error = error_of(provider, request())
    assert "no credentials here" in error.message
    assert len(calls) == 2


def test_a_closed_provider_is_not_given_a_client_by_a_late_warm_up() -> None:
    built: list[object] = []
    with FakeLLMServer() as server:
        provider = _counting_anthropic(server, built)
        asyncio.run(provider.aclose())
        thread = warm(provider)
        assert thread is not None
        thread.join(60)
    assert built == []


def _probe_lines(code: str) -> list[str]:
    """The first two lines `code` prints, run in a fresh interpreter (where
    nothing has imported httpx2 or the SDK yet)."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return out.stdout.split("\n")[:2]


_EXPRESS_PROBE = """
import sys
from flightdeck.llm import create_provider, sdk_modules, warm
provider = create_provider("anthropic", api_key="k", base_url="http://127.0.0.1:9")
print(sdk_modules(provider))
thread = warm(provider)
assert thread is not None and thread.daemon
thread.join(60)
print("anthropic" in sys.modules, "httpx2" in sys.modules, provider._express._client is not None)
"""


def test_warm_builds_the_express_client_and_never_imports_the_sdk() -> None:
    assert _probe_lines(_EXPRESS_PROBE) == ["('httpx2', 'httpcore2')", "False True True"]


def test_warm_builds_the_sdk_client_once_the_sdk_serves_the_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flightdeck.llm import _anthropic, create_provider

    monkeypatch.setattr(_anthropic, "sdk_ready", lambda: True)
    with FakeLLMServer([Turn(text="hello")]) as server:
        provider = create_provider("anthropic", api_key="k", base_url=server.base_url)
        assert isinstance(provider, AnthropicProvider)
        assert "anthropic" in sdk_modules(provider)
        thread = warm(provider)
        assert thread is not None
        thread.join(60)
        assert provider._client._client is not None and provider._express is not None
        assert provider._express._client is None
        events, _ = stream(provider, request())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello"


_IMPORTS_FIRST_PROBE = """
import sys
from flightdeck.llm import create_provider, warm
provider = create_provider("anthropic", api_key="k", base_url="http://127.0.0.1:9")
thread = warm(provider, imports_first=True)
httpx2, httpcore2 = sys.modules.get("httpx2"), sys.modules.get("httpcore2")
print(hasattr(httpx2, "AsyncClient"), hasattr(httpcore2, "AsyncConnectionPool"))
thread.join(60)
print(provider._express._client is not None)
"""


def test_imports_first_returns_once_the_express_modules_are_imported() -> None:
    """The caller goes on only when httpx2 and httpcore2 are fully imported,
    so what is left in the thread (the client and its TLS context) overlaps
    the caller's next work instead of sharing the GIL with it to the end."""
    assert _probe_lines(_IMPORTS_FIRST_PROBE) == ["True True", "True"]
