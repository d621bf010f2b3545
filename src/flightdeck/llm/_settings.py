"""Resolved configuration of one provider: arguments first, then environment.

Checks here only look at strings (and whether an optional package is
installed); nothing imports an SDK, so a configuration error is reported
before any start-up cost is paid.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

import msgspec

from flightdeck.llm._errors import ProviderError


class Settings(msgspec.Struct, frozen=True):
    name: str
    model: str
    api_key: str | None
    base_url: str | None
    options: Mapping[str, Any]
    env: Mapping[str, str]

    def first_env(self, *names: str) -> str | None:
        """The first of these environment variables that is set and non-empty."""
        for name in names:
            value = self.env.get(name)
            if value:
                return value
        return None

    def option(self, key: str, *env_names: str) -> str | None:
        value = self.options.get(key)
        return str(value) if value not in (None, "") else self.first_env(*env_names)

    def check_options(self, known: set[str]) -> None:
        unknown = sorted(set(self.options) - known - _COMMON_OPTIONS)
        if unknown:
            allowed = ", ".join(sorted(known | _COMMON_OPTIONS))
            names = ", ".join(unknown)
            message = f"unknown option(s) for provider {self.name}: {names} (known: {allowed})"
            raise ProviderError("config_error", message)

    def client_kwargs(self) -> dict[str, Any]:
        """Arguments every SDK client takes. The SDKs never retry: the caller
        retries and announces it."""
        kwargs: dict[str, Any] = {"max_retries": 0}
        if self.options.get("timeout") is not None:
            kwargs["timeout"] = float(self.options["timeout"])
        if self.options.get("headers"):
            kwargs["default_headers"] = dict(self.options["headers"])
        return kwargs


_COMMON_OPTIONS = {"timeout", "headers"}


def missing(what: str, how: str) -> ProviderError:
    return ProviderError("config_error", f"{what} not set: {how}")


def has_package(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
