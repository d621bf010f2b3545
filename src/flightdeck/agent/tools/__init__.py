"""The built-in tools (Read, Write, Edit, Bash, Glob, Grep), each confined
to the agent's workspace, and the interface they share."""

from __future__ import annotations

from flightdeck.agent.tools._base import (
    MAX_OUTPUT_CHARS,
    Category,
    ProgressReport,
    Tool,
    ToolFailure,
    ToolOutput,
    Workspace,
    arg_bool,
    arg_str,
    tool_progress,
    truncate,
)
from flightdeck.agent.tools._bash import BashTool, bash_call, bash_launch
from flightdeck.agent.tools._edit import EditTool, replace_text, unified_diff
from flightdeck.agent.tools._glob import GlobTool
from flightdeck.agent.tools._grep import GrepTool
from flightdeck.agent.tools._read import IMAGE_TYPES, ReadTool, numbered_lines, read_window
from flightdeck.agent.tools._sandbox import (
    SandboxConfigError,
    SandboxSettings,
    parse_sandbox,
    sandbox_state,
)
from flightdeck.agent.tools._write import WriteTool


def builtin_tools() -> list[Tool]:
    """One instance of each built-in tool, in a stable order."""
    return [ReadTool(), WriteTool(), EditTool(), BashTool(), GlobTool(), GrepTool()]


__all__ = [
    "IMAGE_TYPES",
    "MAX_OUTPUT_CHARS",
    "BashTool",
    "Category",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ProgressReport",
    "ReadTool",
    "SandboxConfigError",
    "SandboxSettings",
    "Tool",
    "ToolFailure",
    "ToolOutput",
    "Workspace",
    "WriteTool",
    "arg_bool",
    "arg_str",
    "bash_call",
    "bash_launch",
    "builtin_tools",
    "numbered_lines",
    "parse_sandbox",
    "read_window",
    "replace_text",
    "sandbox_state",
    "tool_progress",
    "truncate",
    "unified_diff",
]
