"""Walking and removing directory trees through descriptors, at any depth.

Python 3.11's `os.walk` and `shutil.rmtree` recurse once per level and build
path strings, so a tree a hostile layer or a tool's output nests 1,500 deep
ends in `RecursionError`, and paths past PATH_MAX in `ENAMETOOLONG`. Here
every step is relative to an open directory (`O_NOFOLLOW`, so a link is
never entered), nothing recurses, and the cost is linear in the entries.

These are launch's own: the agent's file tools resolve paths beneath a
workspace with similar descriptor walks (`agent/tools/_fs.py`), but launch
may not import the agent, and what the two need differs (the agent follows
links that stay inside; these never follow one).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class TooDeep(OSError):
    """A tree nested deeper than a walk allows (an `OSError`, so the callers'
    existing "cannot read" branches give their own codes)."""

    def __init__(self, limit: int) -> None:
        super().__init__(errno.ELOOP, f"nested deeper than {limit} directories")
        self.limit = limit

    def __str__(self) -> str:
        return f"nested deeper than {self.limit} directories"


@dataclass(frozen=True)
class Entry:
    """One entry of a walk: its path relative to the top (`/`-joined), the
    open directory holding it, its name there, and its `lstat`."""

    relative: str
    parent_fd: int
    name: str
    info: os.stat_result


def walk(
    top: Path | int, *, max_depth: int, descend: Callable[[str], bool] | None = None
) -> Iterator[Entry]:
    """Every entry under `top`, without following links: a folder's entries
    in sorted order, then each sub-folder's the same way (the order of
    `os.walk` with sorted names). One descriptor per level is held while its
    folder is walked; `TooDeep` past `max_depth` levels. `descend`, given a
    sub-folder's relative path, says whether to walk into it."""
    root = os.open(top, DIR_FLAGS) if isinstance(top, Path) else os.dup(top)
    fds: list[int] = []  # the folders being walked, root first
    pending: list[Iterator[str]] = []  # each one's sub-folders still to walk
    try:
        fd, prefix, prefixes = root, "", [""]
        while True:
            fds.append(fd)
            subdirs: list[str] = []
            for name in sorted(os.listdir(fd)):
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                yield Entry(prefix + name, fd, name, info)
                if stat.S_ISDIR(info.st_mode) and (descend is None or descend(prefix + name)):
                    subdirs.append(name)
            pending.append(iter(subdirs))
            while fds:
                sub = next(pending[-1], None)
                if sub is not None:
                    if len(fds) > max_depth:
                        raise TooDeep(max_depth)
                    prefix = f"{prefixes[-1]}{sub}/"
                    fd = os.open(sub, DIR_FLAGS, dir_fd=fds[-1])
                    prefixes.append(prefix)
                    break
                pending.pop()
                prefixes.pop()
                done = fds.pop()
                if done != root:
                    os.close(done)
            else:
                return
    finally:
        for fd in fds:
            if fd != root:
                os.close(fd)
        os.close(root)


def empty_dir(top: int) -> None:
    """Remove everything inside the open directory `top`. A sub-directory's
    own entries are moved up into `top` (renamed under a fresh name) before
    it is removed, so the work is one step per entry, two descriptors at a
    time, whatever the depth. Links are removed, never followed."""
    pending = os.listdir(top)
    serial = 0
    while pending:
        name = pending.pop()
        if _unlink(top, name):
            continue
        fd = os.open(name, DIR_FLAGS, dir_fd=top)
        try:
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o700)  # a read-only folder (a tool's) stays removable
            for child in os.listdir(fd):
                if _unlink(fd, child):
                    continue
                while True:
                    serial += 1
                    lifted = f".fd-rm-{serial}"
                    try:
                        os.rename(child, lifted, src_dir_fd=fd, dst_dir_fd=top)
                        break
                    except OSError as exc:
                        # A name already there (not an empty folder): try the next.
                        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                            raise
                pending.append(lifted)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=top)


def _unlink(parent: int, name: str) -> bool:
    """Remove a non-directory; False when `name` is a directory."""
    try:
        os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        return False
    except PermissionError:
        # Linux answers EISDIR; some systems answer EPERM for a directory.
        if not stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise
        return False
    return True


def remove_at(parent: int, name: str) -> None:
    """Remove `name` in the open directory `parent`, whatever it is."""
    if _unlink(parent, name):
        return
    fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    try:
        empty_dir(fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def remove_path(path: Path) -> None:
    """`remove_at` for a path whose parent is trusted (a folder flightdeck
    made); missing is fine."""
    try:
        parent = os.open(path.parent, DIR_FLAGS)
    except FileNotFoundError:
        return
    try:
        remove_at(parent, path.name)
    finally:
        os.close(parent)


__all__ = [
    "DIR_FLAGS",
    "FILE_FLAGS",
    "Entry",
    "TooDeep",
    "empty_dir",
    "remove_at",
    "remove_path",
    "walk",
]
