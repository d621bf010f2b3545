"""An MCP server's tool as an agent tool: `mcp__<server>__<tool>`, category
`mcp`, the server's input schema, and its result mapped to a `tool_result`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from flightdeck.agent.mcp._config import tool_name
from flightdeck.agent.tools import Category, ToolOutput, Workspace, tool_progress, truncate

if TYPE_CHECKING:
    from mcp_types import CallToolResult

    from flightdeck.agent.mcp._connection import McpConnection, RemoteTool


class McpTool:
    category: Category = "mcp"

    def __init__(self, connection: McpConnection, remote: RemoteTool) -> None:
        self.connection = connection
        self.remote = remote
        self.server = connection.config.name
        self.name = tool_name(self.server, remote.name)
        self.description = remote.description or f"{remote.name} (MCP server {self.server})"
        self.input_schema: dict[str, Any] = remote.input_schema
        self.source = f"mcp:{self.server} ({connection.config.where})"

    def summary(self, args: dict[str, Any]) -> str:
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return f"MCP {self.server}: {self.remote.name} {shown}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        from flightdeck.agent.mcp._connection import describe

        report = tool_progress.get()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, message)

        try:
            result = await self.connection.call(self.remote.name, args, on_progress)
        except Exception as exc:  # the server failed, not the agent
            return ToolOutput(f"MCP server {self.server} failed: {describe(exc)}", status="error")
        # A tools/list_changed the server sent during the call: the request
        # carrying this result offers the new list (docs/agent-extensions.md).
        await self.connection.settled()
        return map_result(result)


def map_result(result: CallToolResult) -> ToolOutput:
    """Text parts joined; a lone image becomes an `image` result; other parts
    are described; `is_error` becomes status `error`."""
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    status: Literal["success", "error"] = "error" if result.is_error else "success"
    texts: list[str] = []
    images: list[ImageContent] = []
    for part in result.content:
        if isinstance(part, TextContent):
            texts.append(part.text)
        elif isinstance(part, ImageContent):
            images.append(part)
        elif isinstance(part, AudioContent):
            texts.append(f"[audio: {part.mime_type}, {len(part.data)} base64 characters]")
        elif isinstance(part, ResourceLink):
            texts.append(f"[resource link: {part.uri}]")
        elif isinstance(part, EmbeddedResource):
            resource = part.resource
            body = getattr(resource, "text", None)
            texts.append(body if isinstance(body, str) else f"[resource: {resource.uri}]")
    if not texts and not images and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    if len(images) == 1 and not texts:
        image = images[0]
        return ToolOutput(image.data, status, output_type="image", media_type=image.mime_type)
    texts.extend(f"[image: {i.mime_type}, {len(i.data)} base64 characters]" for i in images)
    return ToolOutput(truncate("\n".join(texts)), status)
