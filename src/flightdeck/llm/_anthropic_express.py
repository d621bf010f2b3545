"""The express path of the `anthropic` provider: one streamed Messages request
sent with `httpx2` alone, without importing the Anthropic SDK.

`import anthropic` costs about a second of CPU (its pydantic type models),
which a first message sent the moment the agent is `ready` used to wait for.
The express path sends what the SDK would send for
`messages.create(**params, stream=True)` (the same JSON body, URL, credential
and version headers, default headers and timeout) and reads the response with
httpx2's server-sent-events reader, feeding each event's JSON to the same
`AnthropicFolder` as the SDK path.

It only serves responses that start as a 2xx `text/event-stream`; anything
else raises `Fallback` before any event, and the provider hands the failure
to the SDK, whose error mapping applies, so errors read exactly as on the SDK
path. Nothing is sent twice for a failure: the SDK turns the error response
already received into its exception (with its `retry-after`), and wraps a
refused connection or a timeout as its own send does, so a failed call is
one attempt as on the SDK path. Only a 2xx that is not an event stream (or
a request httpx2 would not build) is sent again, through the SDK. Once the
stream has started, failures are mapped here the way the SDK path maps them
(`map_sdk_error`, `streaming=True`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from types import SimpleNamespace
from typing import Any

from flightdeck.llm._anthropic_events import AnthropicFolder, fold_events
from flightdeck.llm._sdk_errors import from_error_event
from flightdeck.llm._types import StreamEvent

# The SDK's own values (anthropic/_constants.py, _client.py, _base_client.py);
# tests/llm/test_anthropic_express.py pins them against the installed SDK.
API_VERSION = "2026-10-21"
DEFAULT_BASE_URL = "https://api.anthropic.com"
_CONNECT_TIMEOUT = 5.0
_TIMEOUT = 600.0
_MAX_CONNECTIONS, _MAX_KEEPALIVE = 1000, 100


class Fallback(Exception):
    """The express request got no event stream. With `response` (an error
    status, its body read) or `error` (httpx2's, from sending `request`), the
    SDK makes its own exception of that failure; with neither, the SDK sends
    the request again."""

    def __init__(
        self,
        reason: str,
        *,
        response: Any = None,
        error: Exception | None = None,
        request: Any = None,
    ) -> None:
        super().__init__(reason)
        self.response = response
        self.error = error
        self.request = request


class _NeverRaised(Exception):
    """Stands for the SDK's exception classes: none of them can occur here."""


# `map_sdk_error` takes the SDK module only for its exception classes; without
# the SDK, only transport errors (httpx2's) and other exceptions can occur.
_NO_SDK: Any = SimpleNamespace(
    APITimeoutError=_NeverRaised,
    APIConnectionError=_NeverRaised,
    APIStatusError=_NeverRaised,
    APIError=_NeverRaised,
)


class ExpressClient:
    """One httpx2 client for the express path, built on first use or ahead of it
    (`prepare`, from `flightdeck.llm.warm`); none is built once closed."""

    def __init__(
        self,
        *,
        api_key: str | None,
        auth_token: str | None,
        base_url: str | None,
        client_kwargs: Mapping[str, Any],
    ) -> None:
        self._credential = api_key if api_key is not None else auth_token
        self._base_url = base_url
        self._timeout = client_kwargs.get("timeout")
        self._default_headers = dict(client_kwargs.get("default_headers") or {})
        self._lock = threading.Lock()
        self._client: Any = None
        self._closed = False
        self._url: Any = None
        self._headers: Any = None
        self._extensions: dict[str, Any] | None = None

    def prepare(self) -> bool:
        """Import httpx2 and build the client (its TLS context is ~50 ms);
        True when this call built it."""
        with self._lock:
            if self._client is not None or self._closed:
                return False
            try:
                self._build()
            except Exception:  # the request reports it (through the SDK path)
                return False
            return True

    def _get(self) -> Any:
        with self._lock:
            if self._closed:
                raise Fallback("the express client is closed")
            if self._client is None:
                self._build()
            return self._client

    def _build(self) -> None:
        import httpx2

        if self._timeout is not None:
            timeout = httpx2.Timeout(self._timeout)
        else:
            timeout = httpx2.Timeout(timeout=_TIMEOUT, connect=_CONNECT_TIMEOUT)
        self._url, self._extensions = _messages_url(httpx2, self._base_url)
        self._headers = _headers(httpx2, self._credential, self._default_headers)
        limits = httpx2.Limits(
            max_connections=_MAX_CONNECTIONS, max_keepalive_connections=_MAX_KEEPALIVE
        )
        self._client = httpx2.AsyncClient(timeout=timeout, limits=limits, follow_redirects=True)

    async def stream(
        self, params: Mapping[str, Any], folder: AnthropicFolder
    ) -> AsyncGenerator[StreamEvent]:
        """The neutral events of one streamed request; raises `Fallback` (and
        nothing else) before the response has started as an event stream."""
        try:
            client = self._get()
            import httpx2

            request = client.build_request(
                "POST",
                self._url,
                content=_body(params),
                headers=self._headers,
                extensions=self._extensions,
            )
        except Fallback:
            raise
        except Exception as exc:  # e.g. a header value httpx2 rejects: the SDK says which
            raise Fallback(str(exc)) from exc
        try:
            response = await client.send(request, stream=True)
        except Exception as exc:  # refused, timed out: as the SDK's send wraps it
            raise Fallback(str(exc), error=exc, request=request) from exc
        try:
            if not response.is_success:
                raise await _status_fallback(response)
            kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind != "text/event-stream":
                raise Fallback(f"HTTP {response.status_code} {kind}")
            # No size cap per event: the SDK's reader has none either.
            source = httpx2.EventSource(response, max_event_size=None)
            raw = _raw_events(source, response.status_code)
            async with aclosing(raw):
                async for out in fold_events(raw, folder, _NO_SDK):
                    yield out
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the client's connections, if one was built; none is built after."""
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            await client.aclose()


async def _status_fallback(response: Any) -> Fallback:
    """An error status is not sent again (that would be a second attempt, at
    once, the caller did not ask for): the SDK is handed this response."""
    try:
        await response.aread()
    except Exception as exc:  # the body broke off: the SDK sends it again
        return Fallback(f"HTTP {response.status_code}: {exc}")
    return Fallback(f"HTTP {response.status_code}", response=response)


async def _raw_events(source: Any, status: int) -> AsyncGenerator[Any]:
    """Each event's JSON, as the SDK's stream gives its events: `ping` and
    unnamed events are skipped (httpx2 names an unnamed event "message"), an
    `error` event raises."""
    async for sse in source:
        event = sse.event
        if event in ("ping", "message"):
            continue
        if event == "error":
            raise from_error_event(sse.data, status)
        if sse.data:
            # Decoded exactly as the SDK decodes it (exception types included):
            # the fast path must fail the way the SDK's own stream fails.
            yield json.loads(sse.data)


def _body(params: Mapping[str, Any]) -> bytes:
    """The JSON the SDK sends: the arguments, `stream`, then `extra_body` on top."""
    body = {k: v for k, v in params.items() if k != "extra_body"}
    body["stream"] = True
    body.update(params.get("extra_body") or {})
    return json.dumps(body).encode()


def _messages_url(httpx2: Any, base_url: str | None) -> tuple[Any, dict[str, Any] | None]:
    """`{base}/v1/messages` joined as the SDK joins it: the base keeps its path
    and gains a trailing slash; ANTHROPIC_BASE_URL is read as the SDK reads it."""
    if base_url is None:
        base_url = os.environ.get("ANTHROPIC_BASE_URL")
    if base_url is None:
        base_url = DEFAULT_BASE_URL
    base = httpx2.URL(base_url)
    if not base.raw_path.endswith(b"/"):
        base = base.copy_with(raw_path=base.raw_path + b"/")
    url = base.copy_with(raw_path=base.raw_path + b"v1/messages")
    # The SDK's work-around for hosts with "_" (TLS server names cannot have one).
    extensions = {"sni_hostname": url.host.replace("_", "-")} if "_" in url.host else None
    return url, extensions


def _headers(httpx2: Any, credential: str | None, default_headers: Mapping[str, str]) -> Any:
    """The SDK's headers that matter to the API, custom ones last (and winning
    whatever their casing): ANTHROPIC_CUSTOM_HEADERS, then `headers` options."""
    headers = httpx2.Headers(encoding="utf-8")
    if credential is not None:
        headers["Authorization"] = f"Bearer {credential}"
    headers["anthropic-version"] = API_VERSION
    headers["Accept"] = "application/json"  # as the SDK sends, also for a stream
    headers["Content-Type"] = "application/json"
    for name, value in {**_env_headers(), **default_headers}.items():
        headers[name] = value
    return headers


def _env_headers() -> dict[str, str]:
    """ANTHROPIC_CUSTOM_HEADERS, one `Name: value` per line, parsed as the SDK does."""
    raw = os.environ.get("ANTHROPIC_CUSTOM_HEADERS")
    parsed: dict[str, str] = {}
    for line in (raw or "").split("\n"):
        colon = line.find(":")
        if colon >= 0:
            parsed[line[:colon].strip()] = line[colon + 1 :].strip()
    return parsed
