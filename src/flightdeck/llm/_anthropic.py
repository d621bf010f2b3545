"""The Anthropic Messages API provider (also the engine behind Bedrock and Vertex).

The SDK client is built on the first call, not at construction, so creating
a provider (and reporting its configuration errors) costs no SDK import.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from flightdeck.llm._anthropic_events import AnthropicFolder
from flightdeck.llm._anthropic_request import anthropic_params
from flightdeck.llm._client import ClientSlot
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._sdk_errors import map_sdk_error
from flightdeck.llm._settings import Settings, missing
from flightdeck.llm._types import Request, StreamEvent

ClientFactory = Callable[[], Any]


class AnthropicProvider:
    """Streams Anthropic Messages events from any Anthropic SDK client
    (`AsyncAnthropic`, `AsyncAnthropicBedrock`, `AsyncAnthropicVertex`)."""

    def __init__(
        self, name: str, model: str, client_factory: ClientFactory, *, prompt_caching: bool = True
    ) -> None:
        self.name = name
        self.model = model
        self.prompt_caching = prompt_caching
        self._client = ClientSlot(client_factory)

    def prepare(self) -> None:
        """Build the SDK client ahead of the first call (`flightdeck.llm.warm`
        calls it off the caller's thread)."""
        if self._client.prepare():
            _prime_event_parsing()

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        import anthropic

        params = anthropic_params(request, self.model, cache=self.prompt_caching)
        folder = AnthropicFolder(params["model"])
        try:
            raw = await self._client.get().messages.create(**params, stream=True)
        except Exception as exc:
            raise map_sdk_error(exc, anthropic, streaming=False) from exc
        try:
            async for event in raw:
                for out in folder.feed(event):
                    yield out
                if folder.finished:
                    return
        except ProviderError:
            raise
        except Exception as exc:
            raise map_sdk_error(exc, anthropic, streaming=True) from exc
        finally:
            await raw.close()
        raise ProviderError(
            "stream_interrupted",
            "the response stream ended before message_stop",
            retryable=True,
        )

    async def aclose(self) -> None:
        """Close the SDK client's connections (if one was built)."""
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
    kwargs = settings.client_kwargs()

    def factory() -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=api_key, auth_token=auth_token, base_url=base_url, **kwargs
        )

    return AnthropicProvider("anthropic", settings.model, factory, prompt_caching=caching(settings))


def caching(settings: Settings) -> bool:
    """Prompt caching is on unless `options={"prompt_caching": False}`."""
    return settings.options.get("prompt_caching", True) is not False
