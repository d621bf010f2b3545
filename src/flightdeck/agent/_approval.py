"""Who decides whether a tool call runs: the approval mode, the session
allow-list (categories or tool names), or the client."""

from __future__ import annotations

from dataclasses import dataclass, field

from flightdeck.agent._settings import Mode

_AUTO_BY_MODE: dict[Mode, frozenset[str]] = {
    "default": frozenset(),
    "auto_edit": frozenset({"info", "edit"}),
    "yolo": frozenset({"info", "edit", "exec", "mcp"}),
}


@dataclass
class ApprovalPolicy:
    mode: Mode = "default"
    # Categories ("info", "edit", "exec", "mcp") or tool names that skip approval.
    allow: set[str] = field(default_factory=set)

    def auto_approves(self, tool_name: str, category: str) -> bool:
        return (
            category in _AUTO_BY_MODE[self.mode]
            or category in self.allow
            or tool_name in self.allow
        )


@dataclass(frozen=True)
class Decision:
    approved: bool
    reason: str = ""
