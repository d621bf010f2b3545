"""Workspace path rules for the file contract: token interpolation and confinement.

Interpolation is one pass over the template: each token is replaced once and
the replaced text is never scanned again. Token values may not contain path
separators, so interpolation cannot add path segments. Confinement resolves
symlinks and refuses any path whose real location leaves the workspace.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

TOKENS = ("runId", "workflowId", "toolId", "isoDate")
_TOKEN_RE = re.compile(r"<([A-Za-z][A-Za-z0-9_-]*)>")


def unknown_tokens(template: str) -> list[str]:
    """Tokens in `template` outside the portable set."""
    return [m.group(1) for m in _TOKEN_RE.finditer(template) if m.group(1) not in TOKENS]


def unsafe_token_value(value: str) -> str | None:
    """Why `value` may not be substituted into a path, or None when it may."""
    if value in ("", ".", ".."):
        return f"{value!r} is not a usable path segment"
    for bad in ("/", "\\", "\x00"):
        if bad in value:
            return f"{value!r} contains {bad!r}, which would add path segments"
    return None


def interpolate(template: str, values: Mapping[str, str]) -> str:
    """Replace each known token once. Text produced by a replacement is not re-expanded."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        return values[name] if name in values else match.group(0)

    return _TOKEN_RE.sub(sub, template)


def relative_path_problem(path: str) -> str | None:
    """Why `path` is not an acceptable workspace-relative path, or None."""
    if not path or not path.strip():
        return "path is empty"
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        return f"{path!r} is absolute; workspace paths are relative"
    if "\x00" in path:
        return f"{path!r} contains a NUL byte"
    segments = re.split(r"[/\\]", path)
    if ".." in segments:
        return f"{path!r} contains a '..' segment"
    if all(s in ("", ".") for s in segments):
        return f"{path!r} names the workspace itself, not a file"
    return None


def _within(root: str, candidate: str) -> bool:
    try:
        return os.path.commonpath([root, candidate]) == root
    except ValueError:  # different drives
        return False


def confine(workspace: Path, path: str) -> Path:
    """The real location of `path` inside `workspace`; ValueError when it leaves it.

    Symlinks are resolved (existing ancestors of a not-yet-existing target too).
    """
    problem = relative_path_problem(path)
    if problem is not None:
        raise ValueError(problem)
    root = os.path.realpath(workspace)
    real = os.path.realpath(os.path.join(root, path))
    if not _within(root, real) or real == root:
        raise ValueError(f"{path!r} resolves to {real}, outside the workspace {root}")
    return Path(real)


def confine_target(workspace: Path, path: str) -> Path:
    """Where a sync may write `path`: its real parent directory (inside the
    workspace) joined with the declared file name, so a symlink planted at the
    target itself is replaced rather than followed. ValueError when it leaves.
    """
    problem = relative_path_problem(path)
    if problem is not None:
        raise ValueError(problem)
    segments = [s for s in re.split(r"[/\\]", path) if s not in ("", ".")]
    root = os.path.realpath(workspace)
    parent = os.path.realpath(os.path.join(root, *segments[:-1]))
    if not _within(root, parent):
        raise ValueError(f"{path!r} resolves under {parent}, outside the workspace {root}")
    return Path(parent) / segments[-1]
