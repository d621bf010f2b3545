"""Model providers behind one streaming interface (shared by the agent and
the Flight Plan llm-seam). Provider SDKs are imported lazily: on a provider's
first call, never at import or construction."""

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
    from flightdeck.llm._anthropic import AnthropicProvider
    from flightdeck.llm._errors import ProviderError
    from flightdeck.llm._factory import PROVIDER_NAMES, create_provider, default_model
    from flightdeck.llm._openai import OpenAIProvider
    from flightdeck.llm._provider import Provider, complete
    from flightdeck.llm._scripted import ScriptedProvider, ScriptedTurn
    from flightdeck.llm._types import (
        ContentBlock,
        ImageBlock,
        Message,
        Request,
        Response,
        StopReason,
        StreamDone,
        StreamEvent,
        TextBlock,
        TextDelta,
        ThinkingBlock,
        ThinkingDelta,
        ToolCallReady,
        ToolResultBlock,
        ToolSpec,
        ToolUseBlock,
        Usage,
    )
    from flightdeck.llm._warm import sdk_modules, warm

_LAZY: dict[str, tuple[str, str]] = {
    "sdk_modules": ("flightdeck.llm._warm", "sdk_modules"),
    "warm": ("flightdeck.llm._warm", "warm"),
    "AnthropicProvider": ("flightdeck.llm._anthropic", "AnthropicProvider"),
    "ProviderError": ("flightdeck.llm._errors", "ProviderError"),
    "PROVIDER_NAMES": ("flightdeck.llm._factory", "PROVIDER_NAMES"),
    "create_provider": ("flightdeck.llm._factory", "create_provider"),
    "default_model": ("flightdeck.llm._factory", "default_model"),
    "OpenAIProvider": ("flightdeck.llm._openai", "OpenAIProvider"),
    "Provider": ("flightdeck.llm._provider", "Provider"),
    "complete": ("flightdeck.llm._provider", "complete"),
    "ScriptedProvider": ("flightdeck.llm._scripted", "ScriptedProvider"),
    "ScriptedTurn": ("flightdeck.llm._scripted", "ScriptedTurn"),
    "ContentBlock": ("flightdeck.llm._types", "ContentBlock"),
    "ImageBlock": ("flightdeck.llm._types", "ImageBlock"),
    "Message": ("flightdeck.llm._types", "Message"),
    "Request": ("flightdeck.llm._types", "Request"),
    "Response": ("flightdeck.llm._types", "Response"),
    "StopReason": ("flightdeck.llm._types", "StopReason"),
    "StreamDone": ("flightdeck.llm._types", "StreamDone"),
    "StreamEvent": ("flightdeck.llm._types", "StreamEvent"),
    "TextBlock": ("flightdeck.llm._types", "TextBlock"),
    "TextDelta": ("flightdeck.llm._types", "TextDelta"),
    "ThinkingBlock": ("flightdeck.llm._types", "ThinkingBlock"),
    "ThinkingDelta": ("flightdeck.llm._types", "ThinkingDelta"),
    "ToolCallReady": ("flightdeck.llm._types", "ToolCallReady"),
    "ToolResultBlock": ("flightdeck.llm._types", "ToolResultBlock"),
    "ToolSpec": ("flightdeck.llm._types", "ToolSpec"),
    "ToolUseBlock": ("flightdeck.llm._types", "ToolUseBlock"),
    "Usage": ("flightdeck.llm._types", "Usage"),
}


__all__ = [
    "PROVIDER_NAMES",
    "AnthropicProvider",
    "ContentBlock",
    "ImageBlock",
    "Message",
    "OpenAIProvider",
    "Provider",
    "ProviderError",
    "Request",
    "Response",
    "ScriptedProvider",
    "ScriptedTurn",
    "StopReason",
    "StreamDone",
    "StreamEvent",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolCallReady",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "complete",
    "create_provider",
    "default_model",
    "sdk_modules",
    "warm",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
