"""Who decides whether a tool call runs: the approval mode, the session
allow-list (categories or tool names), what the client chose to always allow,
or the client.

"Always allow" never widens past what the user saw (docs/decisions.md): for
Bash it remembers the root commands of the command shown (`echo` for
`echo one`), as AionUi's approval store and Claude Code's permission rules
do; for any other tool it remembers that tool in that category, never the
whole category.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

import msgspec

from flightdeck.agent.engine._settings import Mode

_AUTO_BY_MODE: dict[Mode, frozenset[str]] = {
    "default": frozenset(),
    "auto_edit": frozenset({"info", "edit"}),
    "yolo": frozenset({"info", "edit", "exec", "mcp"}),
}
SHELL_TOOL = "Bash"
# The reason given for approvals nobody can answer any more (stdin closed).
CLOSED_INPUT = "client closed input"
# Substitutions run commands the root-command view cannot see.
_HIDDEN_COMMANDS = re.compile(r"`|\$\(|<\(|>\(")
_OPERATOR_CHARS = frozenset(";&|")


def root_commands(command: str) -> frozenset[str] | None:
    """The root command of each part of a shell command line (`ls -l | wc`
    -> {ls, wc}), or None when they cannot all be seen (a substitution, a
    leading variable assignment, unbalanced quotes, nothing at all)."""
    if _HIDDEN_COMMANDS.search(command):
        return None
    # Newlines separate commands; shlex would take them for spaces.
    lexer = shlex.shlex(command.replace("\n", ";"), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes
        return None
    roots: set[str] = set()
    starts_part = True
    for token in tokens:
        if token and set(token) <= _OPERATOR_CHARS:
            starts_part = True
        elif starts_part:
            if "=" in token:
                return None
            roots.add(token)
            starts_part = False
    return frozenset(roots) or None


class ApprovalPolicy(msgspec.Struct):
    mode: Mode = "default"
    # Categories ("info", "edit", "exec", "mcp") or tool names that skip
    # approval, from `[agent] allow_list`.
    allow: set[str] = msgspec.field(default_factory=set)
    # What the client approved with scope "always".
    commands: set[str] = msgspec.field(default_factory=set)
    tools: set[tuple[str, str]] = msgspec.field(default_factory=set)

    def auto_approves(
        self, tool_name: str, category: str, args: Mapping[str, Any] | None = None
    ) -> bool:
        if (
            category in _AUTO_BY_MODE[self.mode]
            or category in self.allow
            or tool_name in self.allow
            or (tool_name, category) in self.tools
        ):
            return True
        if tool_name == SHELL_TOOL and self.commands:
            roots = root_commands(str((args or {}).get("command", "")))
            return roots is not None and roots <= self.commands
        return False

    def always_allow(self, tool_name: str, category: str, args: Mapping[str, Any]) -> None:
        """Remember a scope "always" approval, no wider than what was shown."""
        if tool_name == SHELL_TOOL:
            roots = root_commands(str(args.get("command", "")))
            if roots is not None:
                self.commands |= roots
            return  # a command whose parts cannot be seen is approved once only
        self.tools.add((tool_name, category))


class Decision(msgspec.Struct, frozen=True):
    approved: bool
    reason: str = ""
    # what the user filled in, for an MCP elicitation approved with values
    content: dict[str, Any] | None = None
