"""Read, Write and Edit through the ACP client's file system.

When the client advertises `fs.readTextFile` and `fs.writeTextFile`, text
goes through `fs/read_text_file` and `fs/write_text_file`, so the model sees
the editor's unsaved buffers and the editor sees (and can undo) every change.
The workspace confinement stays the agent's: a path is resolved inside the
workspace first (`Workspace.resolve`, links judged as for the disk tools),
and only that absolute path is sent. Images are still read from disk (the
client's fs is text only). Edit's rule is kept with content in place of
mtimes: a file must have been read (or written) in this session, and be the
same text now, before it is edited.

A file is asked for whole, so Read can say how many lines are left and Edit
can compare it. An answer longer than a stdin line may be (16 MiB) cannot be
read; the frame check fails the request instead (`RESPONSE_TOO_LARGE`), and
Read then asks for just its window (`line`/`limit` of `fs/read_text_file`).
A window that is still too large, or an Edit of such a file, is a tool error.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from acp import Client, RequestError

from flightdeck.agent.acp._frames import RESPONSE_TOO_LARGE
from flightdeck.agent.acp._standin import StandIn
from flightdeck.agent.tools import (
    IMAGE_TYPES,
    Tool,
    ToolFailure,
    ToolOutput,
    Workspace,
    arg_bool,
    arg_str,
    numbered_lines,
    read_window,
    replace_text,
    truncate,
    unified_diff,
)

# Read's format: `cat -n` numbering, each line cut at this many characters.
_MAX_LINE = 2000


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class TooLarge(ToolFailure):
    """The client's answer was over the line limit and could not be read."""


def _too_large(exc: RequestError) -> bool:
    data = exc.data
    return isinstance(data, dict) and data.get("code") == RESPONSE_TOO_LARGE


class ClientFiles:
    """One session's view of the client's file system."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.seen: dict[Path, str] = {}  # path -> digest of the text last read or written

    async def read(
        self, path: Path, raw: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """The file's text (with `line`, `limit`: those lines of it)."""
        try:
            reply = await self.client.read_text_file(
                session_id=self.session_id, path=str(path), line=line, limit=limit
            )
        except RequestError as exc:
            if _too_large(exc):
                what = raw if line is None else f"lines {line}.. of {raw}"
                raise TooLarge(f"cannot read {what}: the client's answer is over 16 MiB") from None
            raise ToolFailure(f"cannot read {raw}: {exc}") from None
        except Exception as exc:  # the client's refusal or failure is the tool's answer
            raise ToolFailure(f"cannot read {raw}: {exc}") from None
        return str(reply.content)

    async def read_or_none(self, path: Path) -> str | None:
        """The text, or None for a file the client cannot read (a new file)."""
        try:
            return await self.read(path, str(path))
        except ToolFailure:
            return None

    async def write(self, path: Path, raw: str, text: str) -> None:
        try:
            await self.client.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except Exception as exc:
            raise ToolFailure(f"cannot write {raw}: {exc}") from None
        self.seen[path] = _digest(text)


class _Wrapped(StandIn):
    def __init__(self, disk: Tool, files: ClientFiles) -> None:
        super().__init__(disk)
        self.files = files


class ClientRead(_Wrapped):
    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raw = arg_str(args, "file_path")
        path = ws.resolve(raw, "file_path")
        if path.suffix.lower() in IMAGE_TYPES or path.is_dir():
            return await self.disk.run(args, ws)  # images (and the directory error) from disk
        offset, limit = read_window(args)
        try:
            text = await self.files.read(path, raw)
        except TooLarge:
            return ToolOutput(await self._window(path, raw, offset, limit))
        self.files.seen[path] = _digest(text)
        return ToolOutput(numbered_lines(text, offset, limit))

    async def _window(self, path: Path, raw: str, offset: int, limit: int) -> str:
        """Lines `offset`.. of a file too large to be sent whole. How many
        lines follow is unknown; a full window says more may."""
        try:
            text = await self.files.read(path, raw, line=offset, limit=limit)
        except TooLarge as exc:
            raise ToolFailure(f"{exc}; read fewer lines (a smaller limit)") from None
        self.files.seen[path] = _digest(text)  # an Edit compares, and fails: too large
        lines = text.splitlines()
        if len(lines) > limit:  # a client that ignores the range sent the whole text
            return numbered_lines(text, offset, limit)
        if not lines:
            if offset == 1:
                return "(empty file)"
            raise ToolFailure(f"offset {offset} is past the end of the file")
        numbered = [f"{n:>6}\t{line[:_MAX_LINE]}" for n, line in enumerate(lines, start=offset)]
        if len(lines) == limit:
            numbered.append(
                f"... (more lines may follow; {raw} is too large to be read whole"
                " through the client: use offset/limit to read them)"
            )
        return truncate("\n".join(numbered))


class ClientWrite(_Wrapped):
    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raw = arg_str(args, "file_path")
        content = arg_str(args, "content")
        path = ws.resolve(raw, "file_path", create_dirs=True)
        if path.exists() and not path.is_file():
            raise ToolFailure(f"{raw} exists and is not a regular file")
        existed = path.exists()
        await self.files.write(path, raw, content)
        verb = "Updated" if existed else "Created"
        return ToolOutput(f"{verb} {ws.display(path)} ({len(content)} characters)")


class ClientEdit(_Wrapped):
    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raw = arg_str(args, "file_path")
        old, new = arg_str(args, "old_string"), arg_str(args, "new_string")
        replace_all = arg_bool(args, "replace_all")
        path = ws.resolve(raw, "file_path")
        seen = self.files.seen.get(path)
        if seen is None:
            raise ToolFailure(f"Read {raw} before editing it")
        if old == new:
            raise ToolFailure("old_string and new_string are the same")
        try:
            before = await self.files.read(path, raw)
        except TooLarge as exc:
            raise ToolFailure(f"{exc}: too large to edit through the client") from None
        if _digest(before) != seen:
            raise ToolFailure(f"{raw} changed since it was last read; read it again")
        after = replace_text(before, old, new, replace_all, raw)
        await self.files.write(path, raw, after)
        diff = unified_diff(before, after, ws.display(path))
        return ToolOutput(truncate(diff), output_type="diff", metadata={"file_path": str(path)})


def use_client_fs(tools: dict[str, Tool], files: ClientFiles) -> None:
    """Put the client-backed Read, Write and Edit in place of the disk ones."""
    for name, kind in (("Read", ClientRead), ("Write", ClientWrite), ("Edit", ClientEdit)):
        disk = tools.get(name)
        if disk is not None:
            tools[name] = kind(disk, files)
