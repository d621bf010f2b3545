"""Turn exceptions of the official SDKs into `ProviderError`s.

The Anthropic and OpenAI SDKs share one exception shape (`APIStatusError`
with `status_code` and `body`, `APIConnectionError`, `APITimeoutError`), so
one mapping serves both; the SDK module is passed in, never imported here.
Transport errors raised while a response body is being read (a connection cut
mid-stream) come from httpx (or httpx2, which newer Anthropic SDKs use).
"""

from __future__ import annotations

import re
import sys
from types import ModuleType
from typing import Any

from flightdeck._json import read_json
from flightdeck.llm._errors import ProviderError

_CONTEXT_WORDING = re.compile(
    r"prompt is too long|context.length|context window|maximum context|too many (input )?tokens"
    r"|exceeds? the (available )?context|context_length_exceeded"
    r"|input length and `max_tokens` exceed"
    # llama.cpp's server: "request (N tokens) exceeds the available context
    # size (M tokens)", with the error type below
    r"|exceed_context_size",
    re.IGNORECASE,
)
# Error types that servers send inside an already-started stream.
_STREAM_ERROR_CODES = {
    "overloaded_error": "server_error",
    "api_error": "server_error",
    "server_error": "server_error",
    "rate_limit_error": "rate_limited",
}


def map_sdk_error(exc: BaseException, sdk: ModuleType, *, streaming: bool) -> ProviderError:
    """The `ProviderError` for an exception raised by `sdk` (or its transport).

    `streaming` says whether response events had started to arrive: a
    connection lost after that is a `stream_interrupted`, not a refused call.
    """
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, sdk.APITimeoutError) or _is_transport_timeout(exc):
        return ProviderError("timeout", f"the model call timed out: {exc}", retryable=True)
    if isinstance(exc, sdk.APIConnectionError) or _is_transport_error(exc):
        if streaming:
            message = f"the response stream was cut mid-way: {_cause(exc)}"
            return ProviderError("stream_interrupted", message, retryable=True)
        return ProviderError(
            "connection_error", f"cannot reach the model API: {_cause(exc)}", retryable=True
        )
    if isinstance(exc, sdk.APIStatusError):
        return _from_status(exc.status_code, _message(exc), exc.body, _retry_after(exc))
    if isinstance(exc, sdk.APIError):  # an error event inside a stream
        return _from_stream_error(_message(exc), exc.body)
    return ProviderError("provider_error", f"{type(exc).__name__}: {exc}")


def _from_status(
    status: int, message: str, body: object, retry_after: float | None
) -> ProviderError:
    def error(code: str, retryable: bool = False) -> ProviderError:
        return ProviderError(
            code, message, retryable=retryable, status=status, retry_after=retry_after
        )

    if status in (401, 403):
        return error("auth_error")
    if status == 429:
        return error("rate_limited", True)
    if status == 408:
        return error("timeout", True)
    if status >= 500:
        return error("server_error", True)
    if status == 200:  # Anthropic reports in-stream errors with the stream's status
        mapped = _from_stream_error(message, body)
        return ProviderError(mapped.code, message, retryable=mapped.retryable, status=status)
    if status in (400, 413) and _CONTEXT_WORDING.search(f"{message} {_error_type(body)}"):
        return error("context_too_long")
    if 400 <= status < 500:
        return error("bad_request", status == 409)
    return error("provider_error")


def from_error_event(data: str, status: int) -> ProviderError:
    """The `ProviderError` for an `error` event inside a stream of status
    `status`, read without the SDK exactly as `map_sdk_error` reads the
    exception the SDK's stream raises for it (its body is the event's JSON,
    its message the body's text when the data is not JSON)."""
    body: object = data
    try:
        body = read_json(data)
        fallback = f"{body}"
    except Exception:
        fallback = data or f"Error code: {status}"
    message = _body_message(body)
    return _from_status(status, fallback if message is None else message, body, None)


def _from_stream_error(message: str, body: object) -> ProviderError:
    kind = _error_type(body)
    code = _STREAM_ERROR_CODES.get(kind, "provider_error")
    if code == "provider_error" and "overloaded" in message.lower():
        code = "server_error"
    return ProviderError(code, message, retryable=code != "provider_error")


def _error_type(body: object) -> str:
    """`error.type` (Anthropic) or `type` (OpenAI) of an error body."""
    if isinstance(body, dict):
        inner: Any = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("type") or "")
    return ""


def _message(exc: Any) -> str:
    """The server's own error message when the body has one."""
    message = _body_message(getattr(exc, "body", None))
    return message if message is not None else str(getattr(exc, "message", "") or exc)


def _body_message(body: object) -> str | None:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return None


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _transport_classes(name: str) -> tuple[type[BaseException], ...]:
    classes = []
    for module_name in ("httpx", "httpx2"):
        module = sys.modules.get(module_name)
        cls = getattr(module, name, None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            classes.append(cls)
    return tuple(classes)


def _is_transport_error(exc: BaseException) -> bool:
    return isinstance(exc, _transport_classes("TransportError"))


def _is_transport_timeout(exc: BaseException) -> bool:
    return isinstance(exc, _transport_classes("TimeoutException"))


def _cause(exc: BaseException) -> str:
    """The underlying reason: the SDK's connection errors wrap the transport's."""
    inner = exc.__cause__ or exc.__context__
    return str(inner or exc) if inner is not None and str(inner) else str(exc)
