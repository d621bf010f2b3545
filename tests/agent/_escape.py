"""What the escape tests share: a workspace with a CANARY file beside it,
each tool's answer as the model would see it, and a snapshot of the outside
(tests/agent/test_confinement.py, tests/agent/test_bash_sandbox.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from flightdeck.agent.tools import (
    EditTool,
    GlobTool,
    GrepTool,
    ReadTool,
    Tool,
    ToolFailure,
    Workspace,
    WriteTool,
)
from flightdeck.guard import bwrap_path

CANARY = "CANARY-7f3a9c-outside"
needs_bwrap = pytest.mark.skipif(
    bwrap_path() is None, reason="bubblewrap is missing or cannot create namespaces here"
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "dir").mkdir(parents=True)
    (out / "secret.txt").write_text(f"{CANARY}\n")
    (out / "dir" / "secret.txt").write_text(f"{CANARY}\n")
    (out / "dir" / "outside-only.txt").write_text(f"{CANARY}\n")
    return out


@pytest.fixture
def ws(tmp_path: Path, outside: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "inside.txt").write_text("inside\n")
    return Workspace(root)


def attempt(tool: Tool, ws: Workspace, **args: Any) -> str:
    """What the model would see: the output, or the failure message."""
    try:
        return asyncio.run(tool.run(args, ws)).output
    except ToolFailure as exc:
        return f"failed: {exc}"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def every_tool_on(ws: Workspace, path: str) -> list[str]:
    """Each file tool pointed at `path`: the outputs the model would see."""
    outs = [
        attempt(ReadTool(), ws, file_path=path),
        attempt(WriteTool(), ws, file_path=path, content="overwritten"),
        attempt(EditTool(), ws, file_path=path, old_string=CANARY, new_string="edited"),
        attempt(GlobTool(), ws, pattern="**", path=path),
        attempt(GrepTool(), ws, pattern="CANARY", path=path, output_mode="content"),
    ]
    return outs


@pytest.fixture(params=["ripgrep", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "ripgrep":
        import shutil

        if shutil.which("rg") is None or bwrap_path() is None:
            pytest.skip("ripgrep runs only in the sandbox: needs rg and bubblewrap")
    else:
        monkeypatch.setenv("PATH", "/nonexistent")
    return str(request.param)


def assert_untouched(outside: Path, before: dict[str, bytes]) -> None:
    assert snapshot(outside) == before, "something outside the workspace changed"
