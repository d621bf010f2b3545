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
    for dirpath, dirnames, filenames in os.walk(root):
        # Hidden folders like .actions/ and .drivers/ hold manifests; VCS and
        # dependency folders do not.
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if is_manifest_name(name):
                yield ScanEntry(Path(dirpath) / name, explicit=False)
