"""An MCP server whose tools change, report progress and ask the user, for
the agent tests (stdio only).

`unlock` removes itself, adds `vault` and tells the client its tool list
changed; `count` reports progress per step; `confirm` elicits a yes/no from
the user and answers with what it got; `elicitation` is a plain tool whose
name the agent also uses for elicitations; `roots` lists the client's roots.
Resources: `live://readme` (text), `live://dot` (a PNG) and the template
`live://notes/{name}`. Prompt: `review` (path, optional focus).
"""

from __future__ import annotations

import contextlib
from typing import Annotated

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve
from mcp_types import ListRootsResult
from pydantic import BaseModel

server = MCPServer("live", log_level="WARNING")


def vault() -> str:
    """Open the vault (only after unlock)."""
    return "vault opened"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Unlock the vault: offers `vault` and removes this tool."""
    server.remove_tool("unlock")
    server.add_tool(vault)
    # Both ways a client may be listening: a 2026-07-28 subscription, or
    # the older spontaneous notification.
    await ctx.notify_tools_changed()
    with contextlib.suppress(Exception):
        await ctx.request_context.session.send_tool_list_changed()
    return "unlocked"


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


class Answer(BaseModel):
    ok: bool = False


def _ask(question: str) -> Elicit[Answer]:
    return Elicit(question, Answer)


@server.tool()
async def confirm(
    question: str, answer: Annotated[ElicitationResult[Answer], Resolve(_ask)]
) -> str:
    """Ask the user a yes/no question."""
    # Resolve asks the way the negotiated protocol wants (a request mid-call,
    # or an input-required result the client answers and retries).
    if answer.action == "accept":
        return f"accepted: ok={answer.data.ok}"
    return answer.action


def _roots() -> ListRoots:
    return ListRoots()


@server.tool()
async def roots(listed: Annotated[ListRootsResult, Resolve(_roots)]) -> str:
    """The client's roots, one `name uri` a line."""
    return "\n".join(f"{r.name} {r.uri}" for r in listed.roots)


@server.resource("live://readme", name="readme", description="About this server")
def readme() -> str:
    return "the live server's readme"


@server.resource("live://dot", name="dot", mime_type="image/png")
def dot() -> bytes:
    return b"\x89PNG\r\n\x1a\n"


@server.resource("live://notes/{name}", name="note")
def note(name: str) -> str:
    return f"note {name}"


def summary() -> str:
    """Summarise the conversation (offered after `add_prompt`)."""
    return "Please summarise"


@server.tool()
async def add_prompt(ctx: Context) -> str:
    """Offer the `summary` prompt and tell the client the prompts changed."""
    server.add_prompt(Prompt.from_function(summary))
    await ctx.notify_prompts_changed()
    with contextlib.suppress(Exception):
        await ctx.request_context.session.send_prompt_list_changed()
    return "added"


@server.prompt()
def review(path: str, focus: str = "") -> str:
    """Ask for a review of one file."""
    return f"Please review {path}" + (f" with a focus on {focus}" if focus else "")


@server.tool()
def elicitation() -> str:
    """A tool that happens to share the name the agent gives elicitations."""
    return "a plain tool"


if __name__ == "__main__":
    server.run()
