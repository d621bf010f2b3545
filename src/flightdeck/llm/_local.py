"""The `local` provider: an OpenAI-compatible model server on this machine.

llama.cpp's `llama-server`, Ollama, LM Studio and vLLM all speak Chat
Completions, each on its own default port, and none needs a key. With no
`base_url` (argument, `[providers.local] base_url`, or
`FLIGHTDECK_LOCAL_BASE_URL`) the first call asks each default address for its
`/v1/models`, in `DEFAULT_SERVERS` order, and talks to the first that answers
(`FLIGHTDECK_LOCAL_SERVERS`, space-separated base URLs, replaces that list).
Model `auto` (the default) is the first model the server lists: Ollama and LM
Studio refuse a name they do not serve, llama.cpp serves its one model under
any name. Asking happens on the first call, not at start-up, so an agent can
start before its server does.

Everything after that is the `openai` provider (`_openai.py`) with
`max_tokens` (which every local server knows) and its options
(`tool_choice`, `parallel_tool_calls`, `api_path`, ...).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from flightdeck.llm._errors import ProviderError
from flightdeck.llm._openai import (
    OpenAIProvider,
    client_factory,
    compatible_base_url,
    tool_options,
)
from flightdeck.llm._sdk_errors import map_sdk_error
from flightdeck.llm._settings import Settings
from flightdeck.llm._types import Request, StreamEvent

if TYPE_CHECKING:
    import asyncio

AUTO_MODEL = "auto"
DEFAULT_SERVERS = (
    ("llama.cpp", "http://127.0.0.1:8080/v1"),
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
    ("vLLM", "http://127.0.0.1:8000/v1"),
)
# A loopback port with no server refuses at once; this bounds one that
# accepts and never answers.
_PROBE_TIMEOUT = 2.0


class LocalProvider:
    """Finds its server and model on the first call, then streams through an
    `OpenAIProvider` built for them."""

    def __init__(
        self, settings: Settings, candidates: list[tuple[str, str]], *, named: bool = False
    ) -> None:
        self.name = "local"
        self.model = settings.model
        self._settings = settings
        self._candidates = candidates
        self._named = named  # one server, named by the user: not searched for
        self._inner: OpenAIProvider | None = None
        # asyncio is imported on the first call: the agent builds its
        # provider before `ready`, which asyncio's import would delay.
        self._lock: asyncio.Lock | None = None

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        inner = await self._resolve()
        # Closed with this stream (a stopped turn), not when collected: the
        # response it holds is released at once.
        async with contextlib.aclosing(inner.stream(request)) as events:
            async for event in events:
                yield event

    async def _resolve(self) -> OpenAIProvider:
        import asyncio

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._inner is None:
                self._inner = await self._find()
            return self._inner

    async def _find(self) -> OpenAIProvider:
        import openai

        settings = self._settings
        api_key = settings.api_key or settings.first_env("FLIGHTDECK_LOCAL_API_KEY")
        if self._named and settings.model != AUTO_MODEL:  # nothing to ask
            return self._provider(self._candidates[0][1], [], api_key)
        tried: list[str] = []
        last: ProviderError | None = None
        for label, base_url in self._candidates:
            client = openai.AsyncOpenAI(
                api_key=api_key or "not-needed",
                base_url=base_url,
                max_retries=0,
                timeout=_PROBE_TIMEOUT,
            )
            try:
                models = [m.id async for m in client.models.list()]
            except Exception as exc:
                last = map_sdk_error(exc, openai, streaming=False)
                if self._named and last.status is not None:  # it answered, without a list
                    message = (
                        f"the local server at {base_url} did not list its models"
                        f" ({last.message}); name the model with --model"
                    )
                    raise ProviderError("config_error", message) from None
                tried.append(f"{label} at {base_url}")
                continue
            finally:
                await client.close()
            return self._provider(base_url, models, api_key)
        where = "; ".join(tried)
        hint = "start one, or pass its address: --base-url http://127.0.0.1:PORT/v1"
        detail = f" ({last.message})" if last is not None and len(tried) == 1 else ""
        message = f"no local model server answered: tried {where}{detail}; {hint}"
        raise ProviderError("connection_error", message, retryable=True)

    def _provider(self, base_url: str, models: list[str], api_key: str | None) -> OpenAIProvider:
        model = self._settings.model
        if model == AUTO_MODEL:
            if not models:
                message = f"the local server at {base_url} lists no model; name one with --model"
                raise ProviderError("config_error", message)
            model = models[0]
        self.model = model
        factory = client_factory(self._settings, base_url, api_key)
        provider = OpenAIProvider(
            model, factory, max_tokens_field="max_tokens", extra=tool_options(self._settings)
        )
        provider.name = "local"
        return provider

    def prepare(self) -> None:
        """Nothing to build ahead: the server is found on the first call."""

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


def local_provider(settings: Settings) -> LocalProvider:
    """The `local` provider (see the module's doc)."""
    settings.check_options({"api_path", "tool_choice", "parallel_tool_calls"})
    tool_options(settings)  # a bad value is a configuration error now, not at the first call
    api_path = settings.options.get("api_path")
    base_url = settings.base_url or settings.first_env("FLIGHTDECK_LOCAL_BASE_URL")
    if base_url:
        named = [("the server", compatible_base_url(base_url, api_path))]
        return LocalProvider(settings, named, named=True)
    listed = settings.first_env("FLIGHTDECK_LOCAL_SERVERS")
    candidates = [("a server", url) for url in listed.split()] if listed else DEFAULT_SERVERS
    return LocalProvider(settings, list(candidates))
