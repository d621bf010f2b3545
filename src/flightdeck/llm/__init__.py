"""Model providers behind one streaming interface (shared by the agent and
the Flight Plan llm-seam). Provider SDKs are imported lazily."""

from flightdeck.llm._errors import ProviderError
from flightdeck.llm._provider import Provider, complete
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
    "ContentBlock",
    "ImageBlock",
    "Message",
    "Provider",
    "ProviderError",
    "Request",
    "Response",
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
]
