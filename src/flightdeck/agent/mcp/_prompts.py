"""An MCP server's prompts as slash commands: `/mcp__<server>__<prompt> ARGS`.

A message whose text starts with such a command is not sent as typed: the
server's prompt is fetched with the arguments and its messages become the
user's message. Arguments are the words after the command (shell-like
quoting), given to the prompt's arguments in their declared order; the last
one takes the rest of the line, so a free-text argument needs no quotes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flightdeck.agent.mcp._config import tool_name

if TYPE_CHECKING:
    from mcp_types import GetPromptResult, Prompt

    from flightdeck.agent.mcp._connection import McpConnection


class PromptFailed(Exception):
    """The command names a prompt, but it cannot be given (arguments, server)."""


@dataclass(frozen=True)
class PromptCommand:
    connection: McpConnection
    prompt: Prompt

    @property
    def name(self) -> str:
        """Without the slash; the same shape as the server's tool names."""
        return tool_name(self.connection.config.name, self.prompt.name)

    @property
    def hint(self) -> str:
        """The arguments, for a client's command list: `<name> [optional]`."""
        return " ".join(
            f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.prompt.arguments or []
        )

    @property
    def description(self) -> str:
        server = self.connection.config.name
        return self.prompt.description or f"{self.prompt.name} (MCP server {server})"


def commands_of(connection: McpConnection) -> list[PromptCommand]:
    return [PromptCommand(connection, prompt) for prompt in connection.prompts]


def split_command(text: str) -> tuple[str, str] | None:
    """(`name` without the slash, the rest) when `text` starts with a command."""
    stripped = text.lstrip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, rest = stripped[1:].partition(" ")
    return (name, rest.strip()) if name else None


def arguments(command: PromptCommand, rest: str) -> dict[str, str]:
    declared = list(command.prompt.arguments or [])
    try:
        words = shlex.split(rest)
    except ValueError:  # an unclosed quote: plain words
        words = rest.split()
    values: dict[str, str] = {}
    for i, arg in enumerate(declared):
        if i >= len(words):
            break
        last = i == len(declared) - 1
        values[arg.name] = " ".join(words[i:]) if last else words[i]
    if len(words) > len(declared) and not declared:
        raise PromptFailed(f"/{command.name} takes no arguments")
    missing = [a.name for a in declared if a.required and a.name not in values]
    if missing:
        usage = f"/{command.name} {command.hint}".rstrip()
        raise PromptFailed(f"/{command.name} needs {', '.join(missing)} (usage: {usage})")
    return values


async def render(command: PromptCommand, rest: str) -> str:
    """The prompt's messages as one text (an assistant message is marked so)."""
    from flightdeck.agent.mcp._connection import describe

    values = arguments(command, rest)
    try:
        result = await command.connection.get_prompt(command.prompt.name, values)
    except Exception as exc:
        raise PromptFailed(
            f"/{command.name}: MCP server {command.connection.config.name} failed: {describe(exc)}"
        ) from None
    return _text(result)


def _text(result: GetPromptResult) -> str:
    from mcp_types import EmbeddedResource, ResourceLink, TextContent

    parts: list[str] = []
    for message in result.messages:
        content = message.content
        if isinstance(content, TextContent):
            text = content.text
        elif isinstance(content, EmbeddedResource):
            body = getattr(content.resource, "text", None)
            text = body if isinstance(body, str) else f"[resource: {content.resource.uri}]"
        elif isinstance(content, ResourceLink):
            text = f"[resource link: {content.uri}]"
        else:
            text = f"[{content.type} content]"
        parts.append(text if message.role == "user" else f"(assistant) {text}")
    return "\n\n".join(parts)
