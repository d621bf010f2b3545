"""Model providers behind one streaming interface (shared by the agent and
the Flight Plan llm-seam). Provider SDKs are imported lazily: on a provider's
first call, never at import or construction."""

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
]
