"""Edit: replace an exact string in a file the session has read.

The file must have been read (or written) in this session and be unchanged
since, so the model never edits content it has not seen. Line endings are
kept: a CRLF file stays CRLF. The result is a unified diff.
"""

from __future__ import annotations

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
from flightdeck.agent.tools._write import write_atomic


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
        path = ws.resolve(raw_path)
        old, new = arg_str(args, "old_string"), arg_str(args, "new_string")
        replace_all = arg_bool(args, "replace_all")
        if not path.is_file():
            raise ToolFailure(f"File not found: {raw_path}")
        st = path.stat()
        seen = ws.seen.get(path)
        if seen is None:
            raise ToolFailure(f"Read {raw_path} before editing it")
        if seen != (st.st_mtime_ns, st.st_size):
            raise ToolFailure(f"{raw_path} changed since it was last read; read it again")
        if old == new:
            raise ToolFailure("old_string and new_string are the same")
        before = path.read_bytes().decode("utf-8")
        crlf = "\r\n" in before and before.count("\r\n") == before.count("\n")
        text = before.replace("\r\n", "\n") if crlf else before
        if crlf:
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        count = text.count(old) if old else 0
        if count == 0:
            raise ToolFailure(f"old_string was not found in {raw_path}")
        if count > 1 and not replace_all:
            raise ToolFailure(
                f"old_string occurs {count} times in {raw_path}; give more context "
                "or set replace_all"
            )
        edited = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        after = edited.replace("\n", "\r\n") if crlf else edited
        write_atomic(path, after.encode("utf-8"))
        ws.remember(path)
        diff = unified_diff(before, after, ws.display(path))
        return ToolOutput(truncate(diff), output_type="diff", metadata={"file_path": str(path)})
