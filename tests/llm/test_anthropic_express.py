"""The `anthropic` provider's express path (httpx2, no SDK import) against the
SDK path: the same scripted server turns give the same neutral events, the
same final `Response` or `ProviderError`, and the server receives the same
request (body as JSON, path and the headers the API reads)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.llm import (
    AnthropicProvider,
    ProviderError,
    StreamEvent,
    _anthropic,
    _anthropic_express,
    create_provider,
)
from flightdeck.llm._anthropic_events import AnthropicFolder
from tests.fakes import FakeLLMServer, ToolCall, Turn
from tests.llm._helpers import request

_KEY_HEADERS = ("authorization", "anthropic-version", "content-type", "accept", "x-extra")


@dataclass
class Outcome:
    events: list[StreamEvent]
    error: tuple[str, str, bool, int | None, float | None] | None
    requests: int


def _provider(base_url: str, express: bool, **options: Any) -> AnthropicProvider:
    p = create_provider("anthropic", api_key="k", base_url=base_url, options=options)
    assert isinstance(p, AnthropicProvider)
    if not express:
        p._express = None  # the SDK path, as Bedrock and Vertex always take
    return p


def _run(provider: AnthropicProvider, **fields: Any) -> tuple[list[StreamEvent], Any]:
    events: list[StreamEvent] = []

    async def go() -> None:
        try:
            async for event in provider.stream(request(**fields)):
                events.append(event)
        finally:
            await provider.aclose()

    try:
        asyncio.run(go())
    except ProviderError as exc:
        return events, (exc.code, exc.message, exc.retryable, exc.status, exc.retry_after)
    return events, None


@pytest.fixture(autouse=True)
def _express_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK is imported in this process by the SDK-path runs: the express
    path is taken anyway, as in a process that has not imported it."""
    monkeypatch.setattr(_anthropic, "sdk_ready", lambda: False)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[FakeLLMServer, FakeLLMServer]]:
    with FakeLLMServer() as a, FakeLLMServer() as b:
        yield a, b


def _both(
    servers: tuple[FakeLLMServer, FakeLLMServer], turns: list[Turn], **fields: Any
) -> tuple[Outcome, Outcome]:
    options = fields.pop("options", {})
    outcomes = []
    for server, express in zip(servers, (True, False), strict=True):
        before = len(server.received)
        server.add(*[replace(t) for t in turns])
        events, error = _run(_provider(server.base_url, express, **options), **fields)
        outcomes.append(Outcome(events, error, len(server.received) - before))
        assert server.remaining == 0
    sent = [server.received[-1] for server in servers]
    assert sent[0].headers["user-agent"].startswith("python-httpx2")  # the express path ran
    assert sent[1].headers["user-agent"].startswith("AsyncAnthropic")
    assert sent[0].body == sent[1].body
    assert sent[0].path == sent[1].path
    assert [{h: r.headers.get(h) for h in _KEY_HEADERS} for r in sent] == 2 * [
        {h: sent[1].headers.get(h) for h in _KEY_HEADERS}
    ]
    return outcomes[0], outcomes[1]


def _same(servers: tuple[FakeLLMServer, FakeLLMServer], *turns: Turn, **fields: Any) -> Outcome:
    express, sdk = _both(servers, list(turns), **fields)
    assert express == sdk
    return express


# ---- differential: scripted turns -------------------------------------------

_text = st.text(max_size=40)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_calls = st.lists(
    st.builds(
        ToolCall,
        name=st.sampled_from(["Read", "Write", "Bash"]),
        input=st.dictionaries(st.text(max_size=6), _json_value, max_size=3)
        | st.sampled_from(["{not json", "[1, 2]", ""]),
        id=st.integers(1, 10**6).map(lambda n: f"toolu_{n:06d}"),
    ),
    max_size=2,
)
_turns = st.builds(
    Turn,
    text=_text,
    thinking=st.none() | _text,
    tool_calls=_calls,
    usage=st.none()
    | st.fixed_dictionaries(
        {"input_tokens": st.integers(0, 10**6), "cache_read_tokens": st.integers(0, 99)}
    ),
    stop_reason=st.sampled_from([None, "end_turn", "max_tokens", "stop_sequence", "refusal", "x"]),
    delta_size=st.integers(1, 9),
    cut_after=st.none() | st.integers(0, 12),
    stream_error=st.sampled_from([None, "overloaded_error", "api_error", "invalid_request_error"]),
    error_message=st.sampled_from([None, "Overloaded", "prompt is too long: 1 > 0"]),
    clean_cut=st.booleans(),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=_turns, system=st.none() | _text, temperature=st.none() | st.floats(0, 1))
def test_any_scripted_turn_reads_the_same_on_both_paths(
    servers: tuple[FakeLLMServer, FakeLLMServer], turn: Turn, system: str | None, temperature: Any
) -> None:
    outcome = _same(servers, turn, system=system, temperature=temperature)
    assert outcome.requests == 1


@pytest.mark.parametrize(
    "turn",
    [
        Turn(text="hello there", thinking="let me see", usage={"cache_write_tokens": 7}),
        Turn(text="", tool_calls=[ToolCall("Read", {"path": "a"}, "toolu_1")]),
        Turn(text="abcdefgh", cut_after=4),
        Turn(text="abcdefgh", cut_after=4, clean_cut=True),
        Turn(text="abcdefgh", cut_after=3, stream_error="overloaded_error"),
        Turn(text="abcdefgh", cut_after=3, stream_error="rate_limit_error", error_message="slow"),
        Turn(text="x", cut_after=2, stream_error="invalid_request_error"),
    ],
)
def test_known_turns_read_the_same_on_both_paths(
    servers: tuple[FakeLLMServer, FakeLLMServer], turn: Turn
) -> None:
    _same(servers, turn, thinking_budget=2048)


def test_an_error_event_is_mapped_as_the_sdk_maps_it(
    servers: tuple[FakeLLMServer, FakeLLMServer],
) -> None:
    turn = Turn(text="abcdefgh", cut_after=3, stream_error="overloaded_error")
    outcome = _same(servers, turn)
    assert outcome.error is not None and outcome.error[:3] == (
        "server_error",
        "fake overloaded_error",
        True,
    )


# ---- fallback: failures before the stream starts ------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 413, 429, 500, 529])
def test_an_error_status_is_the_sdk_paths_error_in_one_attempt(
    servers: tuple[FakeLLMServer, FakeLLMServer], status: int
) -> None:
    outcome = _same(servers, Turn(error=status))
    assert outcome.error is not None and outcome.error[3] == status
    assert outcome.requests == 1  # not sent again
    if status == 429:
        assert outcome.error[4] == 0.0  # the fake's retry-after


def test_a_context_error_is_context_too_long_on_both_paths(
    servers: tuple[FakeLLMServer, FakeLLMServer],
) -> None:
    outcome = _same(servers, Turn(error=400, error_message="prompt is too long: 9 > 8"))
    assert outcome.error is not None and outcome.error[0] == "context_too_long"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connection_is_the_sdk_paths_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    express = _run(_provider(url, True))
    sdk = _run(_provider(url, False))
    assert express == sdk
    assert express[1] is not None and express[1][0] == "connection_error"


def test_a_timeout_before_the_response_is_the_sdk_paths_error(
    servers: tuple[FakeLLMServer, FakeLLMServer],
) -> None:
    outcome = _same(servers, Turn(text="late", delay=1.0), options={"timeout": 0.2})
    assert outcome.error is not None and outcome.error[0] == "timeout"
    assert outcome.requests == 1


class _JsonAnswer(BaseHTTPRequestHandler):
    """Answers a stream request with a 200 JSON body (a proxy that buffers)."""

    protocol_version = "HTTP/1.1"
    count = 0

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).count += 1
        data = json.dumps({"type": "message", "content": []}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_response_that_is_not_an_event_stream_is_sent_again_through_the_sdk() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JsonAnswer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        express = _run(_provider(url, True))
        assert _JsonAnswer.count == 2  # the express attempt, then the SDK's
        sdk = _run(_provider(url, False))
    finally:
        server.shutdown()
        server.server_close()
    assert express == sdk


# ---- request: URL and headers -------------------------------------------------


@pytest.mark.parametrize("path", ["", "/", "/proxy", "/proxy/", "/a/b/"])
def test_the_base_url_path_is_joined_as_the_sdk_joins_it(
    servers: tuple[FakeLLMServer, FakeLLMServer], path: str
) -> None:
    express_server, sdk_server = servers
    for server, express in ((express_server, True), (sdk_server, False)):
        _run(_provider(server.base_url + path, express))
    assert express_server.received[-1].path == sdk_server.received[-1].path


def test_custom_headers_and_the_environment_are_read_as_the_sdk_reads_them(
    servers: tuple[FakeLLMServer, FakeLLMServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Extra: from-env\nX-Other: 2")
    _same(servers, Turn(text="ok"), options={"headers": {"x-extra": "option"}})
    assert servers[0].received[-1].headers["x-extra"] == "option"
    assert servers[0].received[-1].headers["x-other"] == "2"


def test_an_auth_token_is_sent_as_the_sdk_sends_it(
    servers: tuple[FakeLLMServer, FakeLLMServer],
) -> None:
    received = []
    for server, express in zip(servers, (True, False), strict=True):
        p = create_provider(
            "anthropic", base_url=server.base_url, env={"ANTHROPIC_AUTH_TOKEN": "tok"}
        )
        assert isinstance(p, AnthropicProvider)
        if not express:
            p._express = None
        _run(p)
        received.append(server.received[-1].headers.get("authorization"))
    assert received == ["Bearer tok", "Bearer tok"]


def test_the_sdk_constants_copied_are_the_installed_sdks() -> None:
    from anthropic import _constants

    assert _anthropic_express.API_VERSION == _constants.ANTHROPIC_API_VERSION
    assert _constants.DEFAULT_TIMEOUT.connect == 5.0
    assert _constants.DEFAULT_TIMEOUT.read == 600.0
    import anthropic

    # the private method the express path hands an error response to
    assert callable(anthropic.AsyncAnthropic._make_status_error_from_response)


# ---- the folder reads dicts as it reads SDK objects -----------------------------


def test_the_folder_reads_json_events_as_it_reads_the_sdks_objects() -> None:
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent

    from tests.fakes import _anthropic_wire

    turn = Turn(text="hi there", thinking="so", tool_calls=[ToolCall("Read", {"a": [1]}, "t1")])
    raw = [
        json.loads(chunk.decode().split("data: ", 1)[1])
        for chunk in _anthropic_wire.stream_events(turn, "m")
    ]
    a, b = AnthropicFolder("m"), AnthropicFolder("m")
    out_a = [e for d in raw for e in a.feed(d)]
    out_b = [e for d in raw for e in b.feed(construct_type(value=d, type_=RawMessageStreamEvent))]
    assert out_a == out_b and a.finished and b.finished


# ---- differential: raw event streams the fake never sends ----------------------


class _RawStream(BaseHTTPRequestHandler):
    """Answers every request with `body` as a 200 event stream."""

    protocol_version = "HTTP/1.1"
    body = b""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


@pytest.fixture(scope="module")
def raw_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RawStream)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _sse(event: str | None, data: str) -> str:
    head = f"event: {event}\n" if event is not None else ""
    return head + "".join(f"data: {line}\n" for line in data.split("\n")) + "\n"


_START = _sse("message_start", json.dumps({"type": "message_start", "message": {"model": "m"}}))
_TEXT = _sse(
    "content_block_start",
    json.dumps({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
)
_DELTA = _sse(
    "content_block_delta",
    json.dumps(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}
    ),
)
_STOP_BLOCK = _sse("content_block_stop", json.dumps({"type": "content_block_stop", "index": 0}))
_STOP = _sse("message_stop", json.dumps({"type": "message_stop"}))
_ODD = st.sampled_from(
    [
        _sse("ping", json.dumps({"type": "ping"})),
        _sse(None, json.dumps({"type": "message_stop"})),  # unnamed: skipped by both
        _sse("content_block_delta", ""),  # no data: skipped
        ": a comment\n\n",
        _sse("error", json.dumps({"type": "error", "error": {"type": "api_error"}})),
        _sse("error", "not json"),
        _sse("error", ""),
        _sse("error", json.dumps({"error": {"type": "overloaded_error", "message": ""}})),
        _sse("error", json.dumps(["a list"])),
        _sse("whatever", json.dumps({"type": "unknown_kind"})),
        _sse("message_delta", json.dumps({"type": "message_delta", "delta": {}})),
        _sse("content_block_delta", "{broken json"),
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(
        st.sampled_from([_START, _TEXT, _DELTA, _DELTA, _STOP_BLOCK, _STOP]) | _ODD, max_size=8
    )
)
def test_any_event_stream_reads_the_same_on_both_paths(raw_server: str, parts: list[str]) -> None:
    _RawStream.body = "".join(parts).encode()
    assert _run(_provider(raw_server, True)) == _run(_provider(raw_server, False))


# ---- which path --------------------------------------------------------------


def test_after_a_failure_imported_the_sdk_later_calls_take_the_sdk_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.undo()  # the real `sdk_ready`, on a flag of this test's own
    monkeypatch.setattr(_anthropic, "_sdk_imported", threading.Event())
    with FakeLLMServer([Turn(error=529), Turn(text="ok")]) as server:
        provider = _provider(server.base_url, True)
        assert provider.express
        first = _run(provider)
        assert first[1] is not None and first[1][0] == "server_error"
        assert not provider.express  # the SDK made the error: it serves from now on
        events, error = _run(_provider(server.base_url, True))
        agents = [r.headers["user-agent"] for r in server.received]
    assert error is None and events
    assert agents[0].startswith("python-httpx2") and agents[1].startswith("AsyncAnthropic")


def test_a_closed_provider_is_not_given_an_express_client_by_a_late_warm_up() -> None:
    from flightdeck.llm import warm

    provider = _provider("http://127.0.0.1:9", True)
    asyncio.run(provider.aclose())
    thread = warm(provider)
    assert thread is not None
    thread.join(60)
    assert provider._express is not None and provider._express._client is None
