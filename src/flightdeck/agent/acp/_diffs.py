"""Write and Edit as ACP diffs.

ACP clients show a file change as `diff` content (path, old text, new text)
rather than as the unified diff the JSON stream carries. The engine's tools
report only the unified diff, so each ACP session wraps its Write and Edit:
the wrapper reads the file's text before and after the inner tool runs and
keeps the pair by path, and the bridge attaches it to that call's
`tool_call_update`. Reading goes wherever the inner tool writes: the disk, or
the client's buffers when the session uses the client's file system.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from flightdeck.agent.tools import Tool, ToolFailure, ToolOutput, Workspace

# path -> its text, None when there is no such file (or it cannot be read as text)
Reader = Callable[[Path], Awaitable[str | None]]


async def read_disk(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class Diffs:
    """The last change of each path made by a wrapped tool in one session."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.changes: dict[Path, tuple[str | None, str]] = {}

    def take(self, path: Path) -> tuple[str | None, str] | None:
        return self.changes.pop(path, None)


class DiffingTool:
    def __init__(self, inner: Tool, diffs: Diffs) -> None:
        self.inner = inner
        self.diffs = diffs
        self.name = inner.name
        self.category = inner.category
        self.description = inner.description
        # a manifest tool's "always ask" survives the wrapping
        self.always_ask = bool(getattr(inner, "always_ask", False))

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.inner.input_schema

    def summary(self, args: dict[str, Any]) -> str:
        return self.inner.summary(args)

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        path = _path(args, ws)
        before = await self.diffs.reader(path) if path is not None else None
        out = await self.inner.run(args, ws)
        if path is None and out.status == "success":
            path = _path(args, ws)  # a Write that made its folders: a new file
        if path is not None and out.status == "success":
            after = await self.diffs.reader(path)
            if after is not None:
                self.diffs.changes[path] = (before, after)
        return out


def _path(args: dict[str, Any], ws: Workspace) -> Path | None:
    raw = args.get("file_path")
    if not isinstance(raw, str):
        return None
    try:
        return ws.resolve(raw, "file_path")
    except ToolFailure:  # the inner tool reports it
        return None


def record_diffs(tools: dict[str, Tool], diffs: Diffs) -> None:
    for name in ("Write", "Edit"):
        tool = tools.get(name)
        if tool is not None:
            tools[name] = DiffingTool(tool, diffs)
