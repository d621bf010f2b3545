"""Provider errors: one type with a stable code and a retryable flag."""

from __future__ import annotations


class ProviderError(Exception):
    """A model call failed.

    `code` is one of: `auth_error`, `rate_limited`, `server_error`,
    `stream_interrupted`, `bad_request`, `context_too_long`, `timeout`,
    `connection_error`, `config_error`, `provider_error`.
    `retryable` says whether trying again may succeed (429, 5xx, a cut stream).
    """

    def __init__(
        self, code: str, message: str, *, retryable: bool = False, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.status = status
