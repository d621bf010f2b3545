"""Getting a provider's SDK ready ahead of its first call, off the caller's thread.

The SDKs are imported on first use so that start-up stays cheap, but that
moves their import (`anthropic` ~1.1 s of CPU, most of it its pydantic
models) onto the first reply. `warm` does that work in a daemon thread right
away: a caller that has finished starting (the agent, after `ready`) calls
it, and by the time the first request arrives the modules are usually in
`sys.modules` and the client is built. Python's per-module import lock makes
a request that arrives mid-import wait for the same import instead of
starting a second one, and the provider's own lock does the same for the
client.

The first call's work is CPU-bound and mostly holds the GIL, so when a
message is sent the moment `ready` is out it still waits for most of it. The
exception is the TLS context: reading the trust store (~25 ms) happens in C
with the GIL released, so on a second core it can overlap the caller's own
work. It only does if it starts while the caller still has work left: two
threads importing at once share the GIL turn by turn and finish together, the
TLS context last. So `warm(..., imports_first=True)` returns only once the
express path's modules are imported (~65 ms of CPU, the caller's thread
waiting); the client, and with it the trust store, is then built beside
whatever the caller does next (the agent: the engine's import, after an
early `ready`). The SDK paths' ~1 s import is never waited for. Otherwise what
`warm` can cut is the work itself:

- the cyclic garbage collector is paused during the import: the import
  creates a few hundred thousand objects, which would set off many full
  collections over a growing heap and none of which is garbage (about 20%
  of the import's CPU time here);
- the client (its HTTP transport and TLS context) and the modules that the
  first request imports on its way are built here too, not on the first
  request.

The `anthropic` provider's express path (`_anthropic_express`) needs no SDK:
for it, `warm` imports httpx2 and builds the express client (~0.1 s of CPU,
~45 ms of it the TLS context) and does not import the SDK at all, neither
then nor later. A message sent at once therefore shares the CPU with no
~1 s import, and the process grows by ~9 MiB (httpx2, the client) instead
of ~50 (the SDK's types); the SDK is imported only if a request fails before its
stream starts (the SDK then reports the failure) or the provider is not the
direct API (Bedrock, Vertex).
"""

from __future__ import annotations

import gc
import importlib
import threading

from flightdeck.llm._anthropic import AnthropicProvider
from flightdeck.llm._local import LocalProvider
from flightdeck.llm._openai import OpenAIProvider

# Imported on a client's first request, not by importing the SDK: anyio loads
# its event-loop backend by name, the SDKs' tracing loads the OpenTelemetry
# propagators (which may fail on a bad OTEL_PROPAGATORS: each is optional here).
_REQUEST_PATH = ("anyio._backends._asyncio", "opentelemetry.propagate", "concurrent.futures.thread")
# The express path's: httpx2 and its transport library (which building the
# client imports), and the anyio backend its async transport loads by name.
_EXPRESS_MODULES = ("httpx2", "httpcore2")
_EXPRESS_REQUEST_PATH = ("anyio._backends._asyncio",)

_gc_paused = threading.Lock()


def sdk_modules(provider: object) -> tuple[str, ...]:
    """The SDK modules `provider`'s first call would import (none if unknown);
    for the express path, the HTTP library it uses instead."""
    if isinstance(provider, AnthropicProvider) and provider.express:
        return _EXPRESS_MODULES
    if isinstance(provider, AnthropicProvider):  # also Bedrock and Vertex
        return ("anthropic", "anthropic.types", "anthropic.lib.streaming")
    if isinstance(provider, OpenAIProvider | LocalProvider):
        return ("openai", "openai.types.chat")
    return ()


def warm(provider: object, *, imports_first: bool = False) -> threading.Thread | None:
    """Import `provider`'s SDK and build its client in a daemon thread; returns
    the thread, or None when the provider needs no SDK (scripted providers, fakes).

    `imports_first`: for the express path, return once its modules are imported
    (at most `_IMPORTS_WAIT` s), so that building the client overlaps the
    caller's next work (see the module's doc); ignored for the SDK paths."""
    modules = sdk_modules(provider)
    if not modules:
        return None
    imported = threading.Event()
    thread = threading.Thread(
        target=_prepare,
        args=(provider, modules, imported),
        name="flightdeck-llm-warm",
        daemon=True,
    )
    thread.start()
    if imports_first and modules == _EXPRESS_MODULES:
        imported.wait(_IMPORTS_WAIT)
    return thread


# A guard only: the express imports take ~0.1 s; a slower disk or a stalled
# import must not hold the caller for long.
_IMPORTS_WAIT = 2.0


def _prepare(provider: object, modules: tuple[str, ...], imported: threading.Event) -> None:
    try:
        ready = _import_all(modules)
    finally:
        imported.set()
    if not ready:
        return
    # The client first: its TLS context is read without the GIL, beside what
    # the caller does now (for the agent, importing asyncio and the engine).
    if isinstance(provider, AnthropicProvider | OpenAIProvider):
        provider.prepare()  # the express client, or the SDK's
    express = modules == _EXPRESS_MODULES
    for name in _EXPRESS_REQUEST_PATH if express else _REQUEST_PATH:
        try:
            importlib.import_module(name)
        except Exception:  # the request path handles (or reports) it itself
            continue


def _import_all(modules: tuple[str, ...]) -> bool:
    # Only one warm-up pauses the collector at a time, and only if it was on:
    # a second one imports with the collector as it finds it, so the first
    # one's re-enable cannot leave it off for good.
    alone = _gc_paused.acquire(blocking=False)
    paused = alone and gc.isenabled()
    if paused:
        gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
    except Exception:  # the real call reports a broken SDK, with its context
        return False
    finally:
        if paused:
            gc.enable()
        if alone:
            _gc_paused.release()
    return True
