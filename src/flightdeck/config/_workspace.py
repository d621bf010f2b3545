"""Finding the workspace a manifest belongs to."""

from __future__ import annotations

import functools
from pathlib import Path

_FILE_MARKERS = ("flightdeck.toml", "WORKSPACE.md")
_DIR_MARKERS = (".actions", ".tools", ".drivers")


@functools.lru_cache(maxsize=4096)
def find_workspace(folder: Path) -> Path | None:
    """The nearest ancestor of `folder` (itself included) that looks like a
    workspace: it holds flightdeck.toml or WORKSPACE.md, or .actions/,
    .tools/ or .drivers/ folders. None when there is no such folder."""
    for candidate in (folder, *folder.parents):
        if any((candidate / name).is_file() for name in _FILE_MARKERS):
            return candidate
        if any((candidate / name).is_dir() for name in _DIR_MARKERS):
            return candidate
    return None
