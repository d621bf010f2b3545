"""The base of every JSON Stream Protocol model, the literals commands and
events share (`_commands.py`, `_models.py`), and the problem a line that is
not a valid command becomes.

Nothing here but msgspec: `agent --acp` reads its `initialize` request
through the line reader (agent/stream/_lines.py), which makes a
`ProtocolProblem` of a line too long, before the models are imported.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Category = Literal["info", "edit", "exec", "mcp"]
Mode = Literal["default", "auto_edit", "yolo"]
MODES: tuple[Mode, ...] = ("default", "auto_edit", "yolo")
ErrorCode = Literal[
    "provider_error",
    "tool_error",
    "config_error",
    "protocol_error",
    "internal_error",
    # The conversation cannot be made to fit the model's context window
    # (agent part 2; see docs/agent-extensions.md).
    "context_overflow",
]


class _Wire(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Every model repeats frozen (for mypy) and kw_only (msgspec does not
    # inherit it): its fields keep their declaration order (the wire's key
    # order) even where a required field follows one with a default.
    # Constraints (`Meta`) are checked when a line is decoded (`read_command`,
    # `decode_event`), not when the agent builds a model from its own values.
    pass


class ProtocolProblem(msgspec.Struct, frozen=True):
    """A line that is not a valid command; `msg_id` when one could be read."""

    message: str
    msg_id: str | None = None
