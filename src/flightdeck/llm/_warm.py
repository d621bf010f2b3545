"""Importing a provider's SDK ahead of its first call, off the caller's thread.

The SDKs are imported on first use so that start-up stays cheap, but that
moves their import (`anthropic` ~1.4 s, most of it its pydantic models) onto
the first reply. `warm` starts that import in a daemon thread right away: a
caller that has finished starting (the agent, after `ready`) calls it, and by
the time the first request arrives the modules are usually in `sys.modules`.
Python's per-module import lock makes a request that arrives mid-import wait
for the same import instead of starting a second one.
"""

from __future__ import annotations

import importlib
import threading

from flightdeck.llm._anthropic import AnthropicProvider
from flightdeck.llm._openai import OpenAIProvider


def sdk_modules(provider: object) -> tuple[str, ...]:
    """The SDK modules `provider`'s first call would import (none if unknown)."""
    if isinstance(provider, AnthropicProvider):  # also Bedrock and Vertex
        return ("anthropic", "anthropic.types", "anthropic.lib.streaming")
    if isinstance(provider, OpenAIProvider):
        return ("openai", "openai.types.chat")
    return ()


def warm(provider: object) -> threading.Thread | None:
    """Import `provider`'s SDK in a daemon thread; returns the thread, or None
    when the provider needs no SDK (scripted providers, fakes)."""
    modules = sdk_modules(provider)
    if not modules:
        return None
    thread = threading.Thread(
        target=_import_all, args=(modules,), name="flightdeck-llm-warm", daemon=True
    )
    thread.start()
    return thread


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the real call reports a broken SDK, with its context
            return
