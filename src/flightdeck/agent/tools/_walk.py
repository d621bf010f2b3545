"""Walk a directory tree the way git sees it: `.gitignore` files respected
(nested ones too, with negation), `.git` itself skipped.

The walk holds a descriptor for each directory it is in and opens the next
one relative to it with `O_NOFOLLOW`, so it never descends through a
symbolic link, even one swapped in while it walks. Links are reported as
names (`Found.is_link`); whoever reads a found file opens it through
`Found.dir_fd`, again without following links.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from flightdeck.agent.tools._base import ToolFailure

if TYPE_CHECKING:
    import pathspec

_ALWAYS_SKIP = frozenset({".git"})
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MAX_GITIGNORE_BYTES = 1 << 20


class Found(msgspec.Struct, frozen=True):
    path: Path  # the real path, inside the workspace
    dir_fd: int  # open while the walk is at this entry
    name: str
    is_link: bool

    def read(self) -> bytes | None:
        """The content of a regular file, or None (a link, a FIFO, gone)."""
        if self.is_link:
            return None
        try:
            fd = os.open(self.name, _FILE_FLAGS, dir_fd=self.dir_fd)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError:
            return None
        finally:
            os.close(fd)

    def mtime(self) -> float:
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False).st_mtime
        except OSError:
            return 0.0


def _load(dir_fd: int) -> pathspec.GitIgnoreSpec | None:
    import pathspec  # imported on first search, not at agent start-up

    found = Found(Path(".gitignore"), dir_fd, ".gitignore", is_link=False)
    data = found.read()
    if data is None or len(data) > MAX_GITIGNORE_BYTES:
        return None
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


class _Rules:
    """The .gitignore specs in force, outermost first, each with its base directory."""

    def __init__(self, specs: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> None:
        self.specs = specs

    def ignored(self, path: Path, is_dir: bool) -> bool:
        verdict = False
        for base, spec in self.specs:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            result = spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                verdict = result.include  # the innermost matching rule wins
        return verdict

    def entering(self, directory: Path, dir_fd: int) -> _Rules:
        spec = _load(dir_fd)
        return _Rules([*self.specs, (directory, spec)]) if spec else self


def walk_files(start: Path, root: Path, *, hidden: bool = True) -> Iterator[Found]:
    """Every non-ignored file (and file-like link) under `start`, a real path
    inside `root`; `.gitignore` files from `root` down apply. `hidden=False`
    also skips dot-files and dot-directories (as ripgrep does)."""
    rules = _Rules([])
    fd = os.open(root, _DIR_FLAGS)
    directory = root
    try:
        parts = start.relative_to(root).parts
        for i, part in enumerate(parts):
            rules = rules.entering(directory, fd)
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if i == len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
                    yield Found(start, fd, part, stat.S_ISLNK(st.st_mode))
                    return
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise ToolFailure(f"{start}: {exc.strerror or exc}") from None
            os.close(fd)
            fd, directory = child, directory / part
        yield from _walk(fd, directory, rules, hidden)
    finally:
        os.close(fd)


def _walk(dir_fd: int, directory: Path, rules: _Rules, hidden: bool) -> Iterator[Found]:
    rules = rules.entering(directory, dir_fd)
    try:
        with os.scandir(dir_fd) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = directory / entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_link = entry.is_symlink()
            is_file = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if entry.name in _ALWAYS_SKIP or (not hidden and entry.name.startswith(".")):
            continue
        if rules.ignored(path, is_dir):
            continue
        if is_dir:
            try:
                child = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError:  # gone, unreadable, or swapped for a link
                continue
            try:
                yield from _walk(child, path, rules, hidden)
            finally:
                os.close(child)
        elif is_file or is_link:
            yield Found(path, dir_fd, entry.name, is_link)
