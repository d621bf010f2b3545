"""Action libraries on disk and the search path that finds them.

A library is a folder holding WORKSPACE.md and `.actions/<slug>/ACTION.md`
(category nesting allowed). A search-path entry is either a library itself
or a root of libraries laid out as `<root>/<owner>/<workspace...>/`.

A library answers to:
  * its WORKSPACE.md `id` when that is `@owner/slug` (`@agentik/actions-standard`),
  * `@<owner.slug>/<slug>` from its WORKSPACE.md `owner`/`slug` fields,
  * `@<owner>/<ws...>` from its folder layout under a search root
    (`<root>/agentik/actions/standard/` answers `@agentik/actions/standard`).

Search order: `--library` flags, then FLIGHTDECK_LIBRARY_PATH (os.pathsep
separated), then `[library] paths` of the workspace's flightdeck.toml
(relative to the workspace).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from flightdeck.config import ConfigError, load_config

ENV_VAR = "FLIGHTDECK_LIBRARY_PATH"
_MAX_LAYOUT_DEPTH = 4


@dataclass(frozen=True)
class Library:
    root: Path
    names: tuple[str, ...]  # "@owner/ws" addresses it answers to

    def answers(self, owner: str, workspace: str) -> bool:
        return f"@{owner}/{workspace}" in self.names

    def action_files(self) -> Iterator[Path]:
        base = self.root / ".actions"
        if base.is_dir():
            yield from sorted(base.rglob("ACTION.md"))

    def find_slug(self, slug: str) -> Path | None:
        """`.actions/<slug>/ACTION.md`, or the same slug nested under a category."""
        direct = self.root / ".actions" / slug / "ACTION.md"
        if direct.is_file():
            return direct
        for path in self.action_files():
            if path.parent.name == slug:
                return path
        return None


def frontmatter(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    try:
        data = yaml.safe_load(text[3:end] if end != -1 else "")
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, Mapping) else {}


def _declared_names(workspace_md: Path) -> list[str]:
    data = frontmatter(workspace_md)
    names: list[str] = []
    ident = data.get("id")
    if isinstance(ident, str) and ident.startswith("@") and ident.count("/") >= 1:
        names.append(ident)
    owner = data.get("owner")
    owner_slug = owner.get("slug") if isinstance(owner, Mapping) else None
    slug = data.get("slug")
    if not isinstance(slug, str) and isinstance(ident, str) and "/" in ident:
        slug = ident.split("/", 1)[1]
    if isinstance(owner_slug, str) and isinstance(slug, str):
        names.append(f"@{owner_slug}/{slug}")
    return names


def _library_at(folder: Path, layout_name: str | None) -> Library:
    names = _declared_names(folder / "WORKSPACE.md")
    if layout_name:
        names.append(layout_name)
    return Library(folder.resolve(), tuple(dict.fromkeys(names)))


def _workspace_files(entry: Path, depth: int = 0) -> Iterator[Path]:
    """WORKSPACE.md files under `entry`, following symlinks, skipping dot folders."""
    try:
        children = sorted(os.scandir(entry), key=lambda d: d.name)
    except OSError:
        return
    for child in children:
        if child.name.startswith(".") or not child.is_dir():
            continue
        folder = Path(child.path)
        if (folder / "WORKSPACE.md").is_file():
            yield folder / "WORKSPACE.md"
        elif depth + 1 < _MAX_LAYOUT_DEPTH:
            yield from _workspace_files(folder, depth + 1)


def discover(entry: Path) -> list[Library]:
    """Libraries under one search-path entry."""
    if (entry / "WORKSPACE.md").is_file():
        return [_library_at(entry, None)]
    found: list[Library] = []
    for workspace_md in _workspace_files(entry):
        rel = workspace_md.parent.relative_to(entry).parts
        layout = f"@{rel[0]}/{'/'.join(rel[1:])}" if len(rel) >= 2 else None
        found.append(_library_at(workspace_md.parent, layout))
    return found


def library_search_path(
    cli: Sequence[str | Path] = (),
    *,
    workspace: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Path, ...]:
    """The ordered, de-duplicated library search path (see module docstring)."""
    environ = os.environ if env is None else env
    out: list[Path] = [Path(p) for p in cli]
    out += [Path(p) for p in environ.get(ENV_VAR, "").split(os.pathsep) if p]
    if workspace is not None:
        try:
            configured = load_config(workspace).get("library.paths", [])
        except ConfigError:
            configured = []  # validate reports the broken config elsewhere
        if isinstance(configured, list):
            out += [workspace / str(p) for p in configured]
    return tuple(dict.fromkeys(p.resolve() for p in out))


def discover_all(paths: Iterable[Path]) -> list[Library]:
    out: list[Library] = []
    for entry in paths:
        out += discover(entry)
    return out
