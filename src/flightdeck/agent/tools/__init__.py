"""The built-in tools (Read, Write, Edit, Bash, Glob, Grep), each confined
to the agent's workspace, and the interface they share.

Names are imported on first use (PEP 562): the agent's settings need the
sandbox settings only, and `agent --json-stream` writes `ready` before any
tool module (and asyncio, which Bash needs) is imported.
"""

from __future__ import annotations

from flightdeck._lazy import LazyNames as _LazyNames

# Not `typing.TYPE_CHECKING`: the settings import this package before typing
# matters; mypy treats any name TYPE_CHECKING the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from flightdeck.agent.tools._base import (
        MAX_OUTPUT_CHARS,
        Category,
        ProgressReport,
        Tool,
        ToolOutput,
        Workspace,
        arg_bool,
        arg_str,
        tool_progress,
        truncate,
    )
    from flightdeck.agent.tools._bash import BashTool, bash_call, bash_launch
    from flightdeck.agent.tools._edit import EditTool, replace_text, unified_diff
    from flightdeck.agent.tools._failure import ToolFailure
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

_HOMES = {
    "MAX_OUTPUT_CHARS": "_base",
    "Category": "_base",
    "ProgressReport": "_base",
    "Tool": "_base",
    "ToolFailure": "_failure",
    "ToolOutput": "_base",
    "Workspace": "_base",
    "arg_bool": "_base",
    "arg_str": "_base",
    "tool_progress": "_base",
    "truncate": "_base",
    "BashTool": "_bash",
    "bash_call": "_bash",
    "bash_launch": "_bash",
    "EditTool": "_edit",
    "replace_text": "_edit",
    "unified_diff": "_edit",
    "GlobTool": "_glob",
    "GrepTool": "_grep",
    "IMAGE_TYPES": "_read",
    "ReadTool": "_read",
    "numbered_lines": "_read",
    "read_window": "_read",
    "SandboxConfigError": "_sandbox",
    "SandboxSettings": "_sandbox",
    "parse_sandbox": "_sandbox",
    "sandbox_state": "_sandbox",
    "WriteTool": "_write",
}
_LAZY = _LazyNames(__name__, {name: f"{__name__}.{home}" for name, home in _HOMES.items()})


def __getattr__(name: str) -> Any:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.names()


def builtin_tools() -> list[Tool]:
    """One instance of each built-in tool, in a stable order."""
    from flightdeck.agent.tools._bash import BashTool
    from flightdeck.agent.tools._edit import EditTool
    from flightdeck.agent.tools._glob import GlobTool
    from flightdeck.agent.tools._grep import GrepTool
    from flightdeck.agent.tools._read import ReadTool
    from flightdeck.agent.tools._write import WriteTool

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
