"""What every built-in tool shares: the tool interface, its result, the
workspace it is confined to, argument checks and output truncation."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec

from flightdeck.agent.tools._failure import ToolFailure as ToolFailure
from flightdeck.agent.tools._sandbox import SandboxSettings

Category = Literal["info", "edit", "exec", "mcp"]
OutputType = Literal["text", "diff", "image"]

# Tool output longer than this keeps its head and tail around a marker.
MAX_OUTPUT_CHARS = 30_000


class ToolOutput(msgspec.Struct, frozen=True):
    output: str
    status: Literal["success", "error"] = "success"
    output_type: OutputType = "text"
    metadata: dict[str, Any] | None = None
    # For images: the media type; `output` then holds the base64 data.
    media_type: str | None = None


class Workspace(msgspec.Struct):
    """The directory tools may touch, plus what this session has read (for Edit)."""

    root: Path
    # resolved path -> (mtime_ns, size) when the file was last read or written
    seen: dict[Path, tuple[int, int]] = msgspec.field(default_factory=dict)
    # how Bash (and ripgrep) are confined: `[agent.sandbox]`
    sandbox: SandboxSettings = msgspec.field(default_factory=SandboxSettings)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def resolve(self, raw: str, name: str = "path", *, create_dirs: bool = False) -> Path:
        """The real path inside the workspace that `raw` names (links that stay
        inside resolved); raises `ToolFailure` for anything else. For display,
        walking starts and files another party opens (an ACP client's file
        system): the agent opens files through `_fs.beneath`."""
        from flightdeck.agent.tools._fs import beneath, check_path_arg

        check_path_arg(raw, name)
        with beneath(self.root, raw, create_dirs=create_dirs) as loc:
            return self.root / loc.rel

    def display(self, path: Path) -> str:
        """Path relative to the workspace, for diffs and listings."""
        try:
            return str(path.relative_to(self.root)) or "."
        except ValueError:
            return str(path)

    def remember(self, path: Path, st: os.stat_result) -> None:
        self.seen[path] = (st.st_mtime_ns, st.st_size)


# (progress, total, message). The turn sets it around a tool's run, so a tool
# whose work reports progress (an MCP server's call) can tell the host.
ProgressReport = Callable[[float, float | None, str | None], None]
tool_progress: ContextVar[ProgressReport | None] = ContextVar("tool_progress", default=None)


class Tool(Protocol):
    name: str
    category: Category
    description: str

    # Read-only, so a class constant (built-in tools) or a per-instance schema
    # (MCP and manifest tools) both fit.
    @property
    def input_schema(self) -> dict[str, Any]: ...

    def summary(self, args: dict[str, Any]) -> str:
        """A one-line human description of this call."""
        ...

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput: ...


def arg_str(args: dict[str, Any], name: str, *, default: str | None = None) -> str:
    value = args.get(name, default)
    if value is None:
        raise ToolFailure(f"missing required argument: {name}")
    if not isinstance(value, str):
        raise ToolFailure(f"argument {name} must be a string")
    return value


def arg_int(args: dict[str, Any], name: str, default: int | None) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolFailure(f"argument {name} must be a number")
    return int(value)


def arg_bool(args: dict[str, Any], name: str, default: bool = False) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ToolFailure(f"argument {name} must be true or false")
    return value


def truncate(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """Keep the head and tail of a long text with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    cut = len(text) - 2 * keep
    return f"{text[:keep]}\n\n[... {cut} characters truncated ...]\n\n{text[-keep:]}"
