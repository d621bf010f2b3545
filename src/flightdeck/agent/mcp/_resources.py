"""An MCP server's resources as one tool: `mcp__<server>__resources`.

Offered only when the server advertises the `resources` capability. Without
`uri` it lists the server's resources and URI templates; with `uri` it reads
one. A tool rather than attachments: the model decides what it needs and
when, and a read goes through the same approval as the server's tools
(category `mcp`), since the content comes from outside the workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flightdeck.agent.mcp._tool import McpTool
from flightdeck.agent.tools import ToolOutput, Workspace, truncate

if TYPE_CHECKING:
    from mcp_types import ReadResourceResult

    from flightdeck.agent.mcp._connection import McpConnection

RESOURCES = "resources"
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uri": {
            "type": "string",
            "description": "The resource to read; leave out to list the resources.",
        }
    },
    "additionalProperties": False,
}


class McpResourcesTool(McpTool):
    def __init__(self, connection: McpConnection) -> None:
        from flightdeck.agent.mcp._connection import RemoteTool

        server = connection.config.name
        description = (
            f"Resources of MCP server {server}: without `uri`, list them (with URI "
            "templates); with `uri`, read that resource."
        )
        super().__init__(connection, RemoteTool(RESOURCES, description, _SCHEMA))

    def summary(self, args: dict[str, Any]) -> str:
        uri = args.get("uri")
        if isinstance(uri, str) and uri:
            return f"MCP {self.server}: read resource {uri[:80]}"
        return f"MCP {self.server}: list resources"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        from flightdeck.agent.mcp._connection import describe

        uri = args.get("uri")
        if uri is not None and not isinstance(uri, str):
            return ToolOutput("uri must be a string", status="error")
        try:
            if uri:
                return read_result(await self.connection.read_resource(uri))
            return ToolOutput(truncate(await self._listing()))
        except Exception as exc:  # the server failed, not the agent
            return ToolOutput(f"MCP server {self.server} failed: {describe(exc)}", status="error")

    async def _listing(self) -> str:
        resources, templates = await self.connection.list_resources()
        lines = []
        for r in resources:
            about = " ".join(
                x for x in (r.name, f"({r.mime_type})" if r.mime_type else "", r.description) if x
            )
            lines.append(f"{r.uri} {about}".rstrip())
        for t in templates:
            about = " ".join(x for x in (t.name, t.description) if x)
            lines.append(f"{t.uri_template} (template) {about}".rstrip())
        return "\n".join(lines) or "(no resources)"


def read_result(result: ReadResourceResult) -> ToolOutput:
    """Text contents joined; a lone image blob becomes an `image` result;
    other blobs are described."""
    from mcp_types import BlobResourceContents, TextResourceContents

    texts: list[str] = []
    blobs: list[BlobResourceContents] = []
    for part in result.contents:
        if isinstance(part, TextResourceContents):
            texts.append(part.text)
        else:
            blobs.append(part)
    if len(blobs) == 1 and not texts and (blobs[0].mime_type or "").startswith("image/"):
        blob = blobs[0]
        return ToolOutput(blob.blob, output_type="image", media_type=blob.mime_type)
    texts.extend(
        f"[blob {b.uri}: {b.mime_type or 'unknown type'}, {len(b.blob)} base64 characters]"
        for b in blobs
    )
    return ToolOutput(truncate("\n".join(texts)))
