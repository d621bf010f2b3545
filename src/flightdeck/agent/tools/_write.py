"""Write: create or replace a file atomically (temp file + rename)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from flightdeck.agent.tools._base import Category, ToolOutput, Workspace, arg_str


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` so a reader sees the old or the new content, never a mix."""
    import tempfile  # on first write, not at agent start-up

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class WriteTool:
    name = "Write"
    category: Category = "edit"
    description = "Create a file in the workspace, or replace its whole content."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to write"},
            "content": {"type": "string", "description": "The complete new content"},
        },
        "required": ["file_path", "content"],
    }

    def summary(self, args: dict[str, Any]) -> str:
        return f"Write to {args.get('file_path', '?')}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        path = ws.resolve(arg_str(args, "file_path"))
        content = arg_str(args, "content")
        existed = path.exists()
        write_atomic(path, content.encode("utf-8"))
        ws.remember(path)
        verb = "Updated" if existed else "Created"
        return ToolOutput(f"{verb} {ws.display(path)} ({len(content)} characters)")
