"""How extensions reach the engine: the one interface the session calls.

The engine imports no extension (MCP servers, `Spawn`, manifest tools) and
no transport. What an extension adds to a session's tool table it adds
directly (`AgentSession.tools`); what the session itself must ask of one is
this `Extension`, which the app registers on the session at start-up
(`AgentSession.extension`, set by `agent/extensions/_load.py`'s
`attach_extensions`) and the session calls:

- `add_server` for a host's `add_mcp_server` command (before the first
  message; the session refuses a later one itself);
- `expand_prompt` for a user message while the session has prompt commands
  (`AgentSession.mcp_prompts`), before the turn commits it;
- `close` when the session closes, after its turn has stopped.

A session with no extension registered (one built directly, as the tests'
harness does) answers `add_mcp_server` with an `info` and sends messages on
as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from flightdeck.agent.protocol._models import AddMcpServerCommand
    from flightdeck.llm import Message


class Extension(Protocol):
    """What the session asks of the extensions registered on it."""

    async def add_server(self, command: AddMcpServerCommand) -> None:
        """Connect the server the host named, offer its tools, and say so
        (`mcp_ready`, or an `info` naming the failure)."""
        ...

    async def expand_prompt(self, msg_id: str, user: Message) -> Message | None:
        """`user` with a prompt command replaced by the prompt's text;
        unchanged when it holds none; None when the prompt failed (the
        extension reported it)."""
        ...

    async def close(self) -> None:
        """Release what the extension opened for the session."""
        ...
