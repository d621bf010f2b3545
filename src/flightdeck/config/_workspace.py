"""Finding the workspace a manifest belongs to."""

from __future__ import annotations

import functools
import os
from pathlib import Path

_FILE_MARKERS = ("flightdeck.toml", "WORKSPACE.md")
_DIR_MARKERS = (".actions", ".tools", ".drivers")
_MARKERS = frozenset(_FILE_MARKERS + _DIR_MARKERS)


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
    # One listing instead of five failed stats: most folders hold no marker.
    try:
        present = _MARKERS.intersection(os.listdir(folder))
    except OSError:  # not listable (but maybe searchable): ask for each marker
        present = _MARKERS
    if any(os.path.isfile(os.path.join(folder, name)) for name in _FILE_MARKERS if name in present):
        return folder
    if any(os.path.isdir(os.path.join(folder, name)) for name in _DIR_MARKERS if name in present):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _find(parent)
