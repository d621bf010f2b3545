"""Walk a directory tree the way git sees it: `.gitignore` files respected
(nested ones too, with negation), `.git` itself skipped."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

_ALWAYS_SKIP = frozenset({".git"})


def _load(directory: Path) -> pathspec.GitIgnoreSpec | None:
    import pathspec  # imported on first search, not at agent start-up

    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError, PermissionError):
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

    def entering(self, directory: Path) -> _Rules:
        spec = _load(directory)
        return _Rules([*self.specs, (directory, spec)]) if spec else self


def walk_files(start: Path, root: Path, *, hidden: bool = True) -> Iterator[Path]:
    """Every non-ignored file under `start`; `.gitignore` files from `root` down apply.
    `hidden=False` also skips dot-files and dot-directories (as ripgrep does)."""
    rules = _Rules([])
    if start != root:
        directory = root
        rules = rules.entering(root)
        for part in start.relative_to(root).parts[:-1]:
            directory = directory / part
            rules = rules.entering(directory)
    if start.is_file():
        yield start
        return
    yield from _walk(start, rules, hidden)


def _walk(directory: Path, rules: _Rules, hidden: bool) -> Iterator[Path]:
    rules = rules.entering(directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except (PermissionError, FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.name in _ALWAYS_SKIP or (not hidden and entry.name.startswith(".")):
            continue
        if rules.ignored(path, is_dir):
            continue
        if is_dir:
            yield from _walk(path, rules, hidden)
        elif entry.is_file():
            yield path
