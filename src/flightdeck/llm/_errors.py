"""Provider errors: one type with a stable code and a retryable flag."""

from __future__ import annotations


class ProviderError(Exception):
    """A model call failed.

    `code` is one of: `auth_error`, `rate_limited`, `server_error`,
    `stream_interrupted`, `bad_request`, `context_too_long`, `timeout`,
    `connection_error`, `config_error`, `provider_error`.
    `retryable` says whether trying again may succeed (429, 5xx, a cut stream).
    `status` is the HTTP status when there was one; `retry_after` the seconds
    the server asked to wait (from a `retry-after` header), when it said so.

    Which failure gets which code:
    - the server refused the caller: `auth_error` (401/403), `bad_request`
      (other 4xx), `context_too_long` (a 400 saying the prompt is too long);
    - the server failed or is busy (retryable): `rate_limited` (429),
      `server_error` (5xx, overloaded), `stream_interrupted` (the stream ended
      or broke before its final event);
    - the network failed (retryable): `connection_error`, `timeout`;
    - the caller misconfigured us: `config_error` (unknown provider, missing
      credential), never retryable;
    - anything else the SDK raised: `provider_error`.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"ProviderError({self.code!r}, {self.message!r}, retryable={self.retryable})"
