"""Finding manifests under the paths a user names."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flightdeck.documents._kinds import is_manifest_name

_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__"})


@dataclass(frozen=True)
class ScanEntry:
    """A file to load, or a path that could not be used (`problem` set)."""

    path: Path
    explicit: bool  # named by the user rather than found in a directory
    problem: str | None = None


def scan_paths(paths: Iterable[str | Path]) -> Iterator[ScanEntry]:
    """Files named directly, and manifest-named files under directories
    (recursively, in sorted order so output is stable)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from _walk(path)
        elif path.exists():
            yield ScanEntry(path, explicit=True)
        else:
            yield ScanEntry(path, explicit=True, problem="no such file or directory")


def _walk(root: Path) -> Iterator[ScanEntry]:
    """`os.walk(root)`'s files, top-down, folders and files in sorted order.

    Written out over `os.scandir`: `os.walk` asks `islink` (an `lstat`) of
    every folder before going in, where the listing's entry already knows
    (~3 us a folder; a manifest often has a folder of its own)."""
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        try:
            listing = os.scandir(top)
        except OSError:
            continue  # as os.walk: a folder that cannot be listed is passed over
        folders: list[os.DirEntry[str]] = []
        names: list[str] = []
        with listing:
            try:
                for entry in listing:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        folders.append(entry)
                    else:
                        names.append(entry.name)
            except OSError:
                continue
        here: Path | None = None
        for name in sorted(names):
            if is_manifest_name(name):
                here = here or Path(top)
                yield ScanEntry(here / name, explicit=False)
        # Hidden folders like .actions/ and .drivers/ hold manifests; VCS and
        # dependency folders do not. Symlinked folders are not followed.
        for entry in sorted(folders, key=_name, reverse=True):
            if entry.name not in _SKIP_DIRS and not _is_symlink(entry):
                stack.append(entry.path)


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _is_symlink(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:  # as os.path.islink
        return False
