"""The Anthropic Messages API provider (also the engine behind Bedrock and Vertex).

The SDK client is built on the first call, not at construction, so creating
a provider (and reporting its configuration errors) costs no SDK import.

The `anthropic` provider (the direct API, not Bedrock or Vertex) also has an
express path (`_anthropic_express`): while the SDK has not been imported by
this process's providers, a request goes out with httpx2 alone, which spares
the first reply the SDK's ~1 s import. A request the express path cannot
serve (no event stream came back) is sent again through the SDK, whose
import then makes every later request take the SDK path.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import Any

from flightdeck.llm._anthropic_events import AnthropicFolder, fold_events
from flightdeck.llm._anthropic_express import ExpressClient, Fallback
from flightdeck.llm._anthropic_request import anthropic_params
from flightdeck.llm._client import ClientSlot
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._sdk_errors import map_sdk_error
from flightdeck.llm._settings import Settings, missing
from flightdeck.llm._types import Request, StreamEvent

ClientFactory = Callable[[], Any]

# Set once `import anthropic` has returned in a provider's call or warm-up. A
# flag, not `"anthropic" in sys.modules`: that is true from the import's start.
_sdk_imported = threading.Event()


def sdk_ready() -> bool:
    """Whether the SDK is fully imported (then the express path is not used)."""
    return _sdk_imported.is_set()


def import_sdk() -> Any:
    """`import anthropic`, noting that it has finished."""
    import anthropic

    _sdk_imported.set()
    return anthropic


class AnthropicProvider:
    """Streams Anthropic Messages events from any Anthropic SDK client
    (`AsyncAnthropic`, `AsyncAnthropicBedrock`, `AsyncAnthropicVertex`)."""

    def __init__(
        self,
        name: str,
        model: str,
        client_factory: ClientFactory,
        *,
        prompt_caching: bool = True,
        express: ExpressClient | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.prompt_caching = prompt_caching
        self._client = ClientSlot(client_factory)
        self._express = express

    @property
    def express(self) -> bool:
        """Whether the next call takes the express path (see the module docstring)."""
        return self._express is not None and not sdk_ready()

    def prepare(self) -> None:
        """Build the client the next call will use ahead of it: the express
        path's, or the SDK's (`flightdeck.llm.warm` calls it off the caller's
        thread)."""
        if self._express is not None and self.express:
            self._express.prepare()
        elif self._client.prepare():
            _prime_event_parsing()

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        params = anthropic_params(request, self.model, cache=self.prompt_caching)
        if self._express is not None and self.express:
            folder = AnthropicFolder(params["model"])
            try:
                # aclosing: a caller that stops early closes the response now, not at GC
                async with aclosing(self._express.stream(params, folder)) as events:
                    async for out in events:
                        yield out
                return
            except Fallback as fallback:  # raised before any event
                error = self._fallback_error(fallback)
                if error is not None:
                    raise error from fallback
                # else the SDK sends it again and says what failed
        async with aclosing(self._sdk_stream(params)) as events:
            async for out in events:
                yield out

    async def _sdk_stream(self, params: dict[str, Any]) -> AsyncGenerator[StreamEvent]:
        anthropic = import_sdk()
        folder = AnthropicFolder(params["model"])
        try:
            raw = await self._client.get().messages.create(**params, stream=True)
        except Exception as exc:
            raise map_sdk_error(exc, anthropic, streaming=False) from exc
        try:
            async for out in fold_events(raw, folder, anthropic):
                yield out
        finally:
            await raw.close()

    def _fallback_error(self, fallback: Fallback) -> ProviderError | None:
        """The SDK path's error for a failure of the express request, made by
        the SDK as it makes its own: from the error response received, or by
        wrapping the transport error as its `send` does. None when there is
        no such failure to hand over (or the SDK's private `_make_status_error_
        from_response` has moved): then the request is sent again."""
        if fallback.response is None and fallback.error is None:
            return None
        anthropic = import_sdk()
        try:
            if fallback.response is not None:
                client = self._client.get()
                exc = client._make_status_error_from_response(fallback.response)
            else:
                import httpx2

                timeout = isinstance(fallback.error, httpx2.TimeoutException)
                cls = anthropic.APITimeoutError if timeout else anthropic.APIConnectionError
                exc = cls(request=fallback.request)
                exc.__cause__ = fallback.error
        except Exception:
            return None
        return map_sdk_error(exc, anthropic, streaming=False)

    async def aclose(self) -> None:
        """Close the clients' connections (if any was built)."""
        if self._express is not None:
            await self._express.aclose()
        await self._client.aclose()


def _prime_event_parsing() -> None:
    """Parse one stream event the way the SDK parses a response's events.

    The SDK builds (and caches) the pydantic validator of its stream-event
    union on the first event it parses, 15-20 ms of the first reply here. The
    parsing helper is private to the SDK, so this is best effort: if it has
    moved, the first reply builds the validator as before."""
    try:
        from anthropic._models import construct_type
        from anthropic.types import RawMessageStreamEvent

        construct_type(value={"type": "message_stop"}, type_=RawMessageStreamEvent)
    except Exception:
        return


def anthropic_provider(settings: Settings) -> AnthropicProvider:
    """The `anthropic` provider: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL."""
    settings.check_options({"prompt_caching"})
    api_key = settings.api_key or settings.first_env("ANTHROPIC_API_KEY")
    auth_token = None if api_key else settings.first_env("ANTHROPIC_AUTH_TOKEN")
    if not api_key and not auth_token:
        raise missing(
            "ANTHROPIC_API_KEY",
            "export ANTHROPIC_API_KEY=sk-ant-... (or ANTHROPIC_AUTH_TOKEN) "
            "to use the anthropic provider",
        )
    base_url = settings.base_url or settings.first_env("ANTHROPIC_BASE_URL")
    kwargs: Mapping[str, Any] = settings.client_kwargs()

    def factory() -> Any:
        return import_sdk().AsyncAnthropic(
            api_key=api_key, auth_token=auth_token, base_url=base_url, **kwargs
        )

    express = ExpressClient(
        api_key=api_key, auth_token=auth_token, base_url=base_url, client_kwargs=kwargs
    )
    return AnthropicProvider(
        "anthropic", settings.model, factory, prompt_caching=caching(settings), express=express
    )


def caching(settings: Settings) -> bool:
    """Prompt caching is on unless `options={"prompt_caching": False}`."""
    return settings.options.get("prompt_caching", True) is not False
