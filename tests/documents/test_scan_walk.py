"""The directory walk finds what `os.walk` found, in the same order: sorted,
top-down, hidden folders in, VCS and dependency folders and symlinked
folders out."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.documents import scan_paths
from flightdeck.documents._kinds import is_manifest_name
from flightdeck.documents._scan import _SKIP_DIRS


def _reference(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if is_manifest_name(name):
                yield Path(dirpath) / name


def _found(root: Path) -> list[Path]:
    entries = list(scan_paths([root]))
    assert all(not e.explicit and e.problem is None for e in entries)
    return [e.path for e in entries]


def test_a_tree_with_links_and_skipped_folders(tmp_path: Path) -> None:
    for folder in ["a/b", "a/.actions/x", ".git/y", "node_modules/z", "B", "a b/c"]:
        (tmp_path / folder).mkdir(parents=True)
    for file in ["a/b/TOOL.md", "a/.actions/x/ACTION.md", ".git/y/ACTION.md"]:
        (tmp_path / file).write_text("---\n---\n")
    for file in ["node_modules/z/TOOL.md", "B/SKILL.md", "B/p.skill.md", "a b/c/DRIVER.md"]:
        (tmp_path / file).write_text("---\n---\n")
    (tmp_path / "a" / "README.md").write_text("")
    (tmp_path / "linked").symlink_to(tmp_path / "a", target_is_directory=True)
    (tmp_path / "a" / "b" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "B" / "TOOL.md").symlink_to(tmp_path / "a" / "b" / "TOOL.md")
    (tmp_path / "B" / "ACTION.md").symlink_to(tmp_path / "absent.md")
    found = _found(tmp_path)
    assert found == list(_reference(tmp_path))
    assert tmp_path / "B" / "ACTION.md" in found  # a dangling link is reported, not dropped
    assert not any("linked" in p.parts or "loop" in p.parts for p in found)


def test_a_symlinked_root_is_walked(tmp_path: Path) -> None:
    (tmp_path / "real" / "t").mkdir(parents=True)
    (tmp_path / "real" / "t" / "TOOL.md").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert _found(tmp_path / "link") == list(_reference(tmp_path / "link")) != []


_names = st.sampled_from(["a", "B", ".x", ".git", "node_modules", "é", "z z", "10", "9"])
_files = st.sampled_from(["ACTION.md", "TOOL.md", "x.skill.md", "SKILL.md", "note.md"])
_trees = st.lists(
    st.tuples(st.lists(_names, min_size=0, max_size=3), _files), min_size=0, max_size=12
)


@settings(max_examples=40, deadline=None)
@given(_trees)
def test_random_trees_are_walked_as_os_walk_walks_them(
    tree: list[tuple[list[str], str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folders, name in tree:
            folder = root.joinpath(*folders)
            folder.mkdir(parents=True, exist_ok=True)
            if not (folder / name).is_dir():
                (folder / name).write_text("")
        assert _found(root) == list(_reference(root))
