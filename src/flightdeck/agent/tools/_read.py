"""Read: a text file as numbered lines, or an image as base64."""

from __future__ import annotations

import base64
import os
from typing import Any, ClassVar

from flightdeck.agent.tools._base import (
    Category,
    ToolFailure,
    ToolOutput,
    Workspace,
    arg_int,
    arg_str,
    truncate,
)
from flightdeck.agent.tools._fs import beneath, check_path_arg, is_dir_at, open_regular, read_all

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
DEFAULT_LIMIT = 2000
MAX_LINE = 2000
# Files up to this size are read whole. A larger one is read as a stream that
# keeps only the asked-for lines, so a multi-gigabyte log cannot exhaust the
# agent's memory; an image that large is refused.
WHOLE_READ_BYTES = 32 * 1024 * 1024
# Bytes kept of one line while streaming (a line is shown up to MAX_LINE characters).
_LINE_BYTES = MAX_LINE * 4


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


class ReadTool:
    name = "Read"
    category: Category = "info"
    description = (
        "Read a file from the workspace. Returns numbered lines (like `cat -n`); `offset` is "
        "the first line (1-based) and `limit` the number of lines. Images are returned as images."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to read"},
            "offset": {"type": "integer", "description": "First line to read (1-based)"},
            "limit": {"type": "integer", "description": "Number of lines to read"},
        },
        "required": ["file_path"],
    }

    def summary(self, args: dict[str, Any]) -> str:
        return f"Read {args.get('file_path', '?')}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raw = arg_str(args, "file_path")
        check_path_arg(raw, "file_path")
        offset, limit = read_window(args)
        with beneath(ws.root, raw) as loc:
            if is_dir_at(loc):
                raise ToolFailure(f"{raw} is a directory")
            path = ws.root / loc.rel
            media = IMAGE_TYPES.get(path.suffix.lower())
            fd, st = open_regular(loc, raw)
            try:
                if st.st_size > WHOLE_READ_BYTES:
                    if media is not None:
                        raise ToolFailure(f"{raw} is an image of {st.st_size:,} bytes, too large")
                    return ToolOutput(_stream_window(fd, raw, st.st_size, offset, limit))
                data = read_all(fd)
            finally:
                os.close(fd)
        if media is not None:
            encoded = base64.b64encode(data).decode("ascii")
            return ToolOutput(encoded, output_type="image", media_type=media)
        if looks_binary(data):
            raise ToolFailure(f"{raw} is a binary file ({len(data)} bytes)")
        ws.remember(path, st)
        return ToolOutput(numbered_lines(data.decode("utf-8", errors="replace"), offset, limit))


def read_window(args: dict[str, Any]) -> tuple[int, int]:
    """The (offset, limit) a Read call asks for, defaults applied."""
    offset = max(arg_int(args, "offset", 1) or 1, 1)
    return offset, max(arg_int(args, "limit", DEFAULT_LIMIT) or DEFAULT_LIMIT, 1)


def numbered_lines(text: str, offset: int, limit: int) -> str:
    """What Read answers for a text: lines `offset`.. numbered like `cat -n`
    (shared with the ACP client's file system, so the model sees one format)."""
    lines = text.splitlines()
    return _numbered(lines[offset - 1 : offset - 1 + limit], offset, len(lines))


def _numbered(chosen: list[str], offset: int, total: int) -> str:
    if not total:
        return "(empty file)"
    if not chosen:
        raise ToolFailure(f"offset {offset} is past the end of the file ({total} lines)")
    numbered = [f"{n:>6}\t{line[:MAX_LINE]}" for n, line in enumerate(chosen, start=offset)]
    rest = total - (offset - 1 + len(chosen))
    if rest > 0:
        numbered.append(f"... ({rest} more lines; use offset/limit to read them)")
    return truncate("\n".join(numbered))


def _stream_window(fd: int, raw: str, size: int, offset: int, limit: int) -> str:
    """Lines `offset`.. of a large text file, holding at most one chunk and
    the window in memory; every line is counted so the answer says how many
    are left, as for a small file."""
    start, end = offset - 1, offset - 1 + limit
    chosen: list[str] = []
    total = 0  # complete lines seen so far
    partial = b""  # the start of the line being read (at most _LINE_BYTES)
    first = True
    while chunk := os.read(fd, 1 << 20):
        if first and looks_binary(chunk):
            raise ToolFailure(f"{raw} is a binary file ({size} bytes)")
        first = False
        ends = chunk.count(b"\n")
        if ends and total + ends > start and total < end:  # the window meets this chunk
            parts = (partial + chunk).split(b"\n")
            for index, line in enumerate(parts[:-1], start=total):
                if start <= index < end:
                    chosen.append(_text(line[:_LINE_BYTES]))
            partial = parts[-1][:_LINE_BYTES]
        elif ends:
            partial = chunk[chunk.rfind(b"\n") + 1 :][:_LINE_BYTES]
        else:
            partial = (partial + chunk)[:_LINE_BYTES]
        total += ends
    if partial:  # a last line with no line end
        if start <= total < end:
            chosen.append(_text(partial))
        total += 1
    return _numbered(chosen, offset, total)


def _text(line: bytes) -> str:
    return line.removesuffix(b"\r").decode("utf-8", errors="replace")
