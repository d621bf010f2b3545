"""validate finds each file's workspace from its real folder, as `resolve()` would,
through a cached walk (one `lstat` per new folder instead of one per component)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flightdeck.config import find_workspace
from flightdeck.validation._checks import _real_parent, _workspace_of


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_the_real_parent_is_what_resolve_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "real" / "ws" / ".tools" / "t" / "TOOL.md"
    tool.parent.mkdir(parents=True)
    (tmp_path / "real" / "ws" / "flightdeck.toml").write_text("")
    tool.write_text("---\n---\n")
    (tmp_path / "linked").symlink_to(tmp_path / "real" / "ws")  # a symlinked folder
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "TOOL.md").symlink_to(tool)  # a symlinked file
    monkeypatch.chdir(tmp_path)
    cases = [
        Path("linked/.tools/t/TOOL.md"),
        Path("other/TOOL.md"),
        Path("linked/.tools/../.tools/t/TOOL.md"),  # `..` after a symlink
        Path("./real/ws/.tools/t/TOOL.md"),
        Path("real/ws/.tools/t/./TOOL.md"),
        tmp_path / "linked" / ".tools" / "t" / "TOOL.md",
        Path("real/ws/flightdeck.toml"),  # a file in the workspace's own folder
        Path("TOOL.md"),  # a bare name: the current folder
    ]
    for case in cases:
        assert _real_parent(case) == case.resolve().parent, case
        assert _workspace_of(case) == find_workspace(case.resolve().parent), case
    for case in cases[:6]:  # the paths to the TOOL.md
        assert _real_parent(case) == tool.resolve().parent
        assert _workspace_of(case) == tmp_path.resolve() / "real" / "ws"
    assert _workspace_of(Path("TOOL.md")) is None
