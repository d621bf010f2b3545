"""`create_provider`: a provider by name, configured from arguments and environment.

Precedence: explicit arguments, then the environment (`env`, by default
`os.environ`). Only configuration is checked here; SDKs load on first call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from flightdeck.llm._anthropic import anthropic_provider
from flightdeck.llm._bedrock import bedrock_provider
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._local import AUTO_MODEL, local_provider
from flightdeck.llm._openai import openai_provider
from flightdeck.llm._provider import Provider
from flightdeck.llm._settings import Settings
from flightdeck.llm._vertex import vertex_provider

# Defaults follow the protocol spec's examples; every one can be overridden with `model`.
_DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-20250514",
    "openai": "gpt-4o",
    "bedrock": "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "vertex": "claude-sonnet-4@20250514",
    # the first model the local server lists (llm/_local.py)
    "local": AUTO_MODEL,
}
_BUILDERS: dict[str, Callable[[Settings], Provider]] = {
    "anthropic": anthropic_provider,
    "openai": openai_provider,
    "bedrock": bedrock_provider,
    "vertex": vertex_provider,
    "local": local_provider,
}
PROVIDER_NAMES = tuple(_DEFAULT_MODELS)


def default_model(name: str) -> str:
    """The model a provider uses when none is given."""
    return _DEFAULT_MODELS[_known(name)]


def create_provider(
    name: str,
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    options: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Provider:
    """A provider by name (`anthropic`, `openai`, `bedrock`, `vertex`, `local`).

    Raises `ProviderError("config_error")` for an unknown name, an unknown
    option, or a missing credential, with a message saying how to set it.
    """
    key = _known(name)
    settings = Settings(
        name=key,
        model=model or _DEFAULT_MODELS[key],
        api_key=api_key or None,
        base_url=base_url or None,
        options=dict(options or {}),
        env=os.environ if env is None else env,
    )
    return _BUILDERS[key](settings)


def _known(name: str) -> str:
    key = name.strip().lower()
    if key not in _DEFAULT_MODELS:
        choices = ", ".join(PROVIDER_NAMES)
        raise ProviderError("config_error", f"unknown provider {name!r}: choose one of {choices}")
    return key
