"""Paths resolved beneath the workspace through directory descriptors.

Every component is opened with `O_NOFOLLOW` relative to the descriptor of
the directory before it, so what is checked is what is used: there is no
moment between a check and an open in which a directory can be swapped for
a symlink. A symlink met on the way is read (`readlinkat`) and its target is
resolved by the same rules, so a link that stays inside the workspace works
and one that leaves it is refused. `..` pops the directory stack and cannot
climb above the workspace root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import msgspec

from flightdeck.agent.tools._failure import ToolFailure

MAX_PATH_CHARS = 4096  # Linux PATH_MAX
MAX_NAME_BYTES = 255  # NAME_MAX
MAX_LINKS = 40  # the kernel's own limit on links followed in one lookup
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC


def check_path_arg(raw: str, name: str) -> None:
    """Refuse what no path can be, with a message the model can act on."""
    if not raw:
        raise ToolFailure(f"argument {name} is empty")
    if "\x00" in raw:
        raise ToolFailure(f"argument {name} contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolFailure(f"argument {name} is longer than {MAX_PATH_CHARS} characters")
    try:
        encoded = os.fsencode(raw)
    except UnicodeError:
        raise ToolFailure(f"argument {name} is not a valid file name") from None
    if any(len(part) > MAX_NAME_BYTES for part in encoded.split(b"/")):
        raise ToolFailure(f"argument {name} has a name longer than {MAX_NAME_BYTES} bytes")


class Beneath(msgspec.Struct):
    """A resolved location: the open parent directory and the final name."""

    parent_fd: int
    name: str  # "" when the location is the workspace root itself
    rel: PurePosixPath  # the location relative to the workspace, links resolved


def _outside(raw: str, root: Path) -> ToolFailure:
    return ToolFailure(f"{raw} is outside the workspace {root}; refused")


def _parts(raw: str, root: Path) -> list[str] | None:
    """The components to walk from the root, or None when `raw` is absolute
    and does not name the workspace literally (`/proc/self/root/...` and
    other routes to the same place are refused, not interpreted)."""
    path = os.path.expanduser(raw) if raw.startswith("~") else raw
    if not path.startswith("/"):
        return path.split("/")
    top = str(root).rstrip("/")
    if path.rstrip("/") == top:
        return []
    if not path.startswith(top + "/"):
        return None
    return path[len(top) + 1 :].split("/")


@contextlib.contextmanager
def beneath(
    root: Path, raw: str, *, create_dirs: bool = False, follow_last: bool = True
) -> Iterator[Beneath]:
    """Resolve `raw` under `root`; the parent descriptor is closed on exit.

    Missing intermediate directories are made when `create_dirs` is true and
    are otherwise reported as not found. The final name may be missing."""
    stack: list[tuple[int, str]] = []
    try:
        stack.append((os.open(root, _DIR_FLAGS), ""))
        first = _parts(raw, root)
        if first is None:
            raise _outside(raw, root)
        pending = list(reversed(first))
        links = 0
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if len(stack) == 1:
                    raise _outside(raw, root)
                os.close(stack.pop()[0])
                continue
            last = not any(p not in ("", ".") for p in pending)
            fd = stack[-1][0]
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    stack.append((-1, part))  # a name that does not exist yet
                    break
                if not create_dirs:
                    raise ToolFailure(f"{raw}: directory {part} not found") from None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                pending.append(part)  # look again: whatever is there now is judged
                continue
            if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                links += 1
                if links > MAX_LINKS:
                    raise ToolFailure(f"{raw}: too many levels of symbolic links")
                target = os.readlink(part, dir_fd=fd)
                if target.startswith("/"):
                    parts = _parts(target, root)
                    if parts is None:
                        raise _outside(raw, root)
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                    pending.extend(reversed(parts))
                else:
                    pending.extend(reversed(target.split("/")))
                continue
            if last:
                stack.append((-1, part))
                break
            if not stat.S_ISDIR(st.st_mode):
                raise ToolFailure(f"{raw}: {part} is not a directory")
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    # Swapped for a link since the stat: judge it again.
                    pending.append(part)
                    links += 1
                    if links > MAX_LINKS:
                        raise ToolFailure(f"{raw} keeps changing; try again") from None
                    continue
                raise
            stack.append((child, part))
        name = stack.pop()[1] if stack[-1][0] == -1 else ""
        if not name and len(stack) > 1:
            # The location is a directory we hold open: hand back its parent.
            fd, name = stack.pop()
            os.close(fd)
        rel = PurePosixPath(*[n for _, n in stack[1:]], *([name] if name else []))
        yield Beneath(stack[-1][0], name, rel)
    except OSError as exc:
        raise ToolFailure(f"{raw}: {exc.strerror or exc}") from None
    finally:
        for fd, _ in stack:
            if fd >= 0:
                os.close(fd)


def open_file(loc: Beneath, raw: str, flags: int = os.O_RDONLY) -> int:
    """Open the resolved name without following a link that appeared since."""
    if not loc.name:
        raise ToolFailure(f"{raw} is a directory")
    try:
        return os.open(loc.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=loc.parent_fd)
    except FileNotFoundError:
        raise ToolFailure(f"File not found: {raw}") from None
    except IsADirectoryError:
        raise ToolFailure(f"{raw} is a directory") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolFailure(f"{raw} changed into a symbolic link; try again") from None
        raise ToolFailure(f"{raw}: {exc.strerror or exc}") from None


def open_regular(loc: Beneath, raw: str) -> tuple[int, os.stat_result]:
    """A regular file open for reading, with its status. `O_NONBLOCK` so a
    FIFO planted in the workspace cannot hang the open; it is then refused."""
    fd = open_file(loc, raw, os.O_RDONLY | os.O_NONBLOCK)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ToolFailure(f"{raw} is not a regular file")
    return fd, st


def write_at(loc: Beneath, raw: str, data: bytes, mode: int | None) -> os.stat_result:
    """Replace the name atomically (a reader sees the old or the new content,
    never a mix) through the held parent directory. The old name is replaced,
    not written through, so a hard link's other names keep their content."""
    import secrets  # on first write, not at agent start-up

    if not loc.name:
        raise ToolFailure(f"{raw} is a directory")
    tmp = f".flightdeck-{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666, dir_fd=loc.parent_fd)
    except OSError as exc:
        raise ToolFailure(f"{raw}: {exc.strerror or exc}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            if mode is not None:
                os.fchmod(fd, mode)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, loc.name, src_dir_fd=loc.parent_fd, dst_dir_fd=loc.parent_fd)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=loc.parent_fd)
        if isinstance(exc, OSError):
            raise ToolFailure(f"{raw}: {exc.strerror or exc}") from None
        raise
    return st


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def lstat_at(loc: Beneath) -> os.stat_result | None:
    try:
        if not loc.name:
            return os.stat(loc.parent_fd)
        return os.stat(loc.name, dir_fd=loc.parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def is_dir_at(loc: Beneath) -> bool:
    st = lstat_at(loc)
    return st is not None and stat.S_ISDIR(st.st_mode)


__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_CHARS",
    "Beneath",
    "beneath",
    "check_path_arg",
    "is_dir_at",
    "lstat_at",
    "open_file",
    "open_regular",
    "read_all",
    "write_at",
]
