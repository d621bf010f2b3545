"""Edit: replace an exact string in a file the session has read.

The file must have been read (or written) in this session and be unchanged
since, so the model never edits content it has not seen. Line endings are
kept: a CRLF file stays CRLF. The result is a unified diff.
"""

from __future__ import annotations

import os
import stat
from typing import Any, ClassVar

from flightdeck.agent.tools._base import (
    Category,
    ToolFailure,
    ToolOutput,
    Workspace,
    arg_bool,
    arg_str,
    truncate,
)
from flightdeck.agent.tools._fs import beneath, check_path_arg, open_regular, read_all, write_at
from flightdeck.agent.tools._read import WHOLE_READ_BYTES


def unified_diff(before: str, after: str, name: str) -> str:
    import difflib  # on first edit, not at agent start-up

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    # Drop carriage returns and add missing newlines so the diff itself is clean text.
    out = []
    for line in lines:
        line = line.replace("\r\n", "\n")
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out).rstrip("\n")


class EditTool:
    name = "Edit"
    category: Category = "edit"
    description = (
        "Replace `old_string` with `new_string` in a file you have read with the Read tool. "
        "`old_string` must match exactly once unless `replace_all` is true."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to edit"},
            "old_string": {"type": "string", "description": "Exact text to replace"},
            "new_string": {"type": "string", "description": "Replacement text"},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence"},
        },
        "required": ["file_path", "old_string", "new_string"],
    }

    def summary(self, args: dict[str, Any]) -> str:
        return f"Edit {args.get('file_path', '?')}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raw_path = arg_str(args, "file_path")
        check_path_arg(raw_path, "file_path")
        old, new = arg_str(args, "old_string"), arg_str(args, "new_string")
        replace_all = arg_bool(args, "replace_all")
        with beneath(ws.root, raw_path) as loc:
            path = ws.root / loc.rel
            fd, st = open_regular(loc, raw_path)
            try:
                if st.st_size > WHOLE_READ_BYTES:  # Read streams it; Edit needs it whole
                    raise ToolFailure(f"{raw_path} is {st.st_size:,} bytes, too large for Edit")
                seen = ws.seen.get(path)
                if seen is None:
                    raise ToolFailure(f"Read {raw_path} before editing it")
                if seen != (st.st_mtime_ns, st.st_size):
                    raise ToolFailure(f"{raw_path} changed since it was last read; read it again")
                if old == new:
                    raise ToolFailure("old_string and new_string are the same")
                raw_bytes = read_all(fd)
            finally:
                os.close(fd)
            try:
                before = raw_bytes.decode("utf-8")
            except UnicodeDecodeError:
                raise ToolFailure(f"{raw_path} is not UTF-8 text; Edit cannot change it") from None
            after = replace_text(before, old, new, replace_all, raw_path)
            try:
                data = after.encode("utf-8")
            except UnicodeEncodeError:
                raise ToolFailure("new_string is not valid Unicode text") from None
            ws.remember(path, write_at(loc, raw_path, data, stat.S_IMODE(st.st_mode)))
        diff = unified_diff(before, after, ws.display(path))
        return ToolOutput(truncate(diff), output_type="diff", metadata={"file_path": str(path)})


def replace_text(before: str, old: str, new: str, replace_all: bool, raw_path: str) -> str:
    """Edit's replacement (exactly once unless `replace_all`; CRLF kept)."""
    crlf = "\r\n" in before and before.count("\r\n") == before.count("\n")
    text = before.replace("\r\n", "\n") if crlf else before
    if crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    count = text.count(old) if old else 0
    if count == 0:
        raise ToolFailure(f"old_string was not found in {raw_path}")
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"old_string occurs {count} times in {raw_path}; give more context or set replace_all"
        )
    edited = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return edited.replace("\n", "\r\n") if crlf else edited
