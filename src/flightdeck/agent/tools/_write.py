"""Write: create or replace a file atomically (temp file + rename), through
the workspace's directory descriptors (`_fs.py`)."""

from __future__ import annotations

import stat
from typing import Any, ClassVar

from flightdeck.agent.tools._base import Category, ToolFailure, ToolOutput, Workspace, arg_str
from flightdeck.agent.tools._fs import beneath, check_path_arg, lstat_at, write_at


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
        raw = arg_str(args, "file_path")
        check_path_arg(raw, "file_path")
        content = arg_str(args, "content")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolFailure("argument content is not valid Unicode text") from None
        with beneath(ws.root, raw, create_dirs=True) as loc:
            old = lstat_at(loc)
            if old is not None and not stat.S_ISREG(old.st_mode):
                raise ToolFailure(f"{raw} exists and is not a regular file")
            mode = stat.S_IMODE(old.st_mode) if old is not None else None
            st = write_at(loc, raw, data, mode)
            path = ws.root / loc.rel
        ws.remember(path, st)
        verb = "Updated" if old is not None else "Created"
        return ToolOutput(f"{verb} {ws.display(path)} ({len(content)} characters)")
