"""Finding the workspace a manifest belongs to."""

from __future__ import annotations

import functools
import os
from pathlib import Path

_FILE_MARKERS = ("flightdeck.toml", "WORKSPACE.md")
_DIR_MARKERS = (".actions", ".tools", ".drivers")


def find_workspace(folder: Path) -> Path | None:
    """The nearest ancestor of `folder` (itself included) that looks like a
    workspace: it holds flightdeck.toml or WORKSPACE.md, or .actions/,
    .tools/ or .drivers/ folders. None when there is no such folder."""
    found = _find(os.fspath(folder))
    return Path(found) if found is not None else None


@functools.lru_cache(maxsize=8192)
def _find(folder: str) -> str | None:
    # Recursing through the cache means a tree of many sibling folders
    # stats each shared ancestor once, not once per file.
    if any(os.path.isfile(os.path.join(folder, name)) for name in _FILE_MARKERS):
        return folder
    if any(os.path.isdir(os.path.join(folder, name)) for name in _DIR_MARKERS):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _find(parent)
