"""ACP content in flightdeck's terms and back: a prompt's blocks as the user
message the engine runs, tool calls as ACP tool-call updates, and a stored
conversation as the `session/update` notifications `session/load` replays."""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    ToolCallLocation,
    ToolKind,
)

from flightdeck.agent.tools import Tool
from flightdeck.llm import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


class PromptError(ValueError):
    """A prompt block the agent cannot take (answered as invalid params)."""


def user_message(blocks: Sequence[PromptBlock]) -> tuple[Message, str]:
    """The user message for a prompt, and its plain text (a new session's title).
    Images come first, as the JSON stream's attached files do; embedded
    resources are quoted as context with their URI; links are named so the
    model can read them with its tools."""
    images: list[ContentBlock] = []
    texts: list[ContentBlock] = []
    title: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(TextBlock(block.text))
            title.append(block.text)
        elif isinstance(block, ImageContentBlock):
            _check_base64(block.data, "image")
            images.append(ImageBlock(block.mime_type, block.data))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                raise PromptError(f"embedded binary resource {resource.uri}: only text is accepted")
            texts.append(TextBlock(f'<context uri="{resource.uri}">\n{resource.text}\n</context>'))
        elif isinstance(block, ResourceContentBlock):
            texts.append(TextBlock(f"[{block.name}]({block.uri})"))
        else:
            raise PromptError("audio prompts are not supported (promptCapabilities.audio is false)")
    if not texts and not images:
        raise PromptError("the prompt is empty")
    return Message("user", [*images, *texts]), " ".join(title)


def _check_base64(data: str, what: str) -> None:
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        raise PromptError(f"{what} data is not base64") from None


_KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "Grep": "search",
    "Glob": "search",
    "Write": "edit",
    "Edit": "edit",
    "Bash": "execute",
}
_BY_CATEGORY: dict[str, ToolKind] = {"info": "read", "edit": "edit", "exec": "execute"}


def tool_kind(name: str, category: str | None) -> ToolKind:
    return _KINDS.get(name) or _BY_CATEGORY.get(category or "", "other")


def locations(args: dict[str, Any], workspace: Path) -> list[ToolCallLocation] | None:
    """The file a call is about (ACP clients follow it), as an absolute path."""
    raw = args.get("file_path") or args.get("path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw)
    return [ToolCallLocation(path=str(path if path.is_absolute() else workspace / path))]


def describe(tool: Tool | None, name: str, args: dict[str, Any]) -> tuple[str, ToolKind]:
    """A call's title and kind."""
    if tool is None:
        return name, tool_kind(name, None)
    try:
        title = tool.summary(args)
    except Exception:  # a summary of malformed arguments must not end the turn
        title = name
    return title or name, tool_kind(tool.name, tool.category)


def result_text(blocks: Sequence[TextBlock | ImageBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))


def replay(history: Sequence[Message], tools: dict[str, Tool], workspace: Path) -> Iterator[Any]:
    """The updates that show a stored conversation again (`session/load`)."""
    for message in history:
        for block in message.content:
            if isinstance(block, TextBlock):
                if message.role == "user":
                    yield update_user_message_text(block.text)
                else:
                    yield update_agent_message_text(block.text)
            elif isinstance(block, ImageBlock) and message.role == "user":
                from acp import image_block

                yield update_user_message(image_block(block.data_base64, block.media_type))
            elif isinstance(block, ThinkingBlock) and not block.redacted:
                yield update_agent_thought_text(block.text)
            elif isinstance(block, ToolUseBlock):
                title, kind = describe(tools.get(block.name), block.name, block.input)
                yield start_tool_call(
                    block.id,
                    title,
                    kind=kind,
                    status="pending",
                    locations=locations(block.input, workspace),
                    raw_input=block.input,
                )
            elif isinstance(block, ToolResultBlock):
                yield update_tool_call(
                    block.tool_use_id,
                    status="failed" if block.is_error else "completed",
                    content=[tool_content(text_block(result_text(block.content)))],
                )
