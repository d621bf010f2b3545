"""Built-in tools, called directly: arguments, workspace confinement, outputs."""

from __future__ import annotations

import asyncio
import base64
import os
import time
from pathlib import Path
from typing import Any

import pytest

from flightdeck.agent.tools import (
    BashTool,
    EditTool,
    GlobTool,
    GrepTool,
    ReadTool,
    Tool,
    ToolFailure,
    ToolOutput,
    Workspace,
    WriteTool,
    builtin_tools,
    truncate,
)


def call(tool: Tool, ws: Workspace, **args: Any) -> ToolOutput:
    return asyncio.run(tool.run(args, ws))


def fails(tool: Tool, ws: Workspace, needle: str, **args: Any) -> None:
    with pytest.raises(ToolFailure, match=needle):
        call(tool, ws, **args)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


def test_builtin_tools_have_the_spec_names_and_categories() -> None:
    got = {t.name: t.category for t in builtin_tools()}
    assert got == {
        "Read": "info",
        "Glob": "info",
        "Grep": "info",
        "Write": "edit",
        "Edit": "edit",
        "Bash": "exec",
    }
    for tool in builtin_tools():
        assert set(tool.input_schema["required"]) <= set(tool.input_schema["properties"])


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "sub/../../x", "~/somewhere"])
def test_paths_outside_the_workspace_are_refused(ws: Workspace, path: str) -> None:
    (ws.root / "sub").mkdir()
    fails(ReadTool(), ws, "outside the workspace", file_path=path)
    fails(WriteTool(), ws, "outside the workspace", file_path=path, content="x")


def test_symlink_escaping_the_workspace_is_refused(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    (ws.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    fails(ReadTool(), ws, "outside the workspace", file_path="link.txt")


def test_read_numbers_lines_and_honours_offset_and_limit(ws: Workspace) -> None:
    (ws.root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = call(ReadTool(), ws, file_path="f.txt", offset=3, limit=2).output
    assert out.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "6 more lines" in out


def test_read_detects_binary_and_returns_images(ws: Workspace) -> None:
    (ws.root / "b.bin").write_bytes(b"\x00\x01\x02")
    fails(ReadTool(), ws, "binary", file_path="b.bin")
    png = b"\x89PNG\r\n\x1a\n\x00"
    (ws.root / "i.png").write_bytes(png)
    out = call(ReadTool(), ws, file_path="i.png")
    assert out.output_type == "image" and out.media_type == "image/png"
    assert base64.b64decode(out.output) == png
    fails(ReadTool(), ws, "not found", file_path="nope.txt")


def test_write_is_atomic_and_creates_directories(ws: Workspace) -> None:
    out = call(WriteTool(), ws, file_path="a/b/c.txt", content="hello")
    assert out.status == "success" and (ws.root / "a/b/c.txt").read_text() == "hello"
    assert [p.name for p in (ws.root / "a/b").iterdir()] == ["c.txt"]  # no temp left
    fails(WriteTool(), ws, "missing required argument: content", file_path="x.txt")


def test_edit_refuses_a_file_not_read_in_this_session(ws: Workspace) -> None:
    (ws.root / "f.py").write_text("a = 1\n")
    fails(EditTool(), ws, "Read", file_path="f.py", old_string="1", new_string="2")


def test_edit_refuses_a_file_changed_since_it_was_read(ws: Workspace) -> None:
    f = ws.root / "f.py"
    f.write_text("a = 1\n")
    call(ReadTool(), ws, file_path="f.py")
    f.write_text("a = 1\nb = 2\n")
    fails(EditTool(), ws, "changed since", file_path="f.py", old_string="1", new_string="2")


def test_edit_returns_unified_diff_with_file_path(ws: Workspace) -> None:
    f = ws.root / "f.py"
    f.write_text("a = 1\nb = 2\n")
    call(ReadTool(), ws, file_path="f.py")
    out = call(EditTool(), ws, file_path="f.py", old_string="b = 2", new_string="b = 3")
    assert out.output_type == "diff" and out.metadata == {"file_path": str(f)}
    assert out.output.splitlines()[:2] == ["--- a/f.py", "+++ b/f.py"]
    assert "-b = 2\n+b = 3" in out.output
    assert f.read_text() == "a = 1\nb = 3\n"
    # the file was remembered after the edit, so a second edit needs no re-read
    call(EditTool(), ws, file_path="f.py", old_string="a = 1", new_string="a = 0")


def test_edit_keeps_crlf_line_endings(ws: Workspace) -> None:
    f = ws.root / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\n")
    call(ReadTool(), ws, file_path="w.txt")
    call(EditTool(), ws, file_path="w.txt", old_string="one\ntwo", new_string="uno\ndos")
    assert f.read_bytes() == b"uno\r\ndos\r\n"


def test_edit_needs_a_unique_match_unless_replace_all(ws: Workspace) -> None:
    f = ws.root / "f.txt"
    f.write_text("x x x\n")
    call(ReadTool(), ws, file_path="f.txt")
    fails(EditTool(), ws, "3 times", file_path="f.txt", old_string="x", new_string="y")
    fails(EditTool(), ws, "not found", file_path="f.txt", old_string="z", new_string="y")
    call(EditTool(), ws, file_path="f.txt", old_string="x", new_string="y", replace_all=True)
    assert f.read_text() == "y y y\n"


def test_bash_reports_exit_code_stdout_and_stderr(ws: Workspace) -> None:
    out = call(BashTool(), ws, command="echo out; echo err >&2; pwd")
    assert out.status == "success"
    assert out.output.startswith("exit code: 0") and "out" in out.output and "err" in out.output
    assert str(ws.root) in out.output
    bad = call(BashTool(), ws, command="exit 3")
    assert bad.status == "error" and bad.output.startswith("exit code: 3")


def test_bash_timeout_kills_the_command(ws: Workspace) -> None:
    # Found by its command line: in the sandbox the child has a PID of its own
    # namespace, which means nothing out here.
    marker = f"{os.getpid() % 1000}.{time.monotonic_ns() % 997}"
    fails(BashTool(), ws, "timed out", command=f"sleep {marker} & wait", timeout=1500)
    deadline = time.monotonic() + 30  # generous: the machine may be loaded
    while _sleeping(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _sleeping(marker), "the command's background child outlived the timeout"


def _sleeping(marker: str) -> bool:
    """A live (not zombie) `sleep MARKER` process exists."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()] and stat.split(") ")[1][0] != "Z":
            return True
    return False


def test_glob_respects_gitignore_newest_first(ws: Workspace) -> None:
    (ws.root / ".gitignore").write_text("build/\n*.log\n")
    (ws.root / "build").mkdir()
    (ws.root / "build" / "gen.py").write_text("")
    (ws.root / "x.log").write_text("")
    (ws.root / "src").mkdir()
    (ws.root / "src" / ".gitignore").write_text("secret.py\n")
    (ws.root / "src" / "secret.py").write_text("")
    old, new = ws.root / "src" / "old.py", ws.root / "new.py"
    old.write_text("")
    new.write_text("")
    os.utime(old, (1_000_000, 1_000_000))
    out = call(GlobTool(), ws, pattern="**/*.py").output.splitlines()
    assert out == ["new.py", "src/old.py"]
    assert call(GlobTool(), ws, pattern="*.log").output == "No files found"
    assert call(GlobTool(), ws, pattern="*.py", path="src").output == "src/old.py"


def test_glob_caps_results(ws: Workspace) -> None:
    for i in range(105):
        (ws.root / f"f{i}.txt").write_text("")
    out = call(GlobTool(), ws, pattern="*.txt").output.splitlines()
    assert len(out) == 101 and "5 more files" in out[-1]


@pytest.fixture(params=["ripgrep", "python"])
def grep_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Grep answers the same with ripgrep on PATH and with its Python search."""
    import shutil

    if request.param == "ripgrep" and shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed (apt-get install ripgrep)")
    if request.param == "python":
        monkeypatch.setenv("PATH", "/nonexistent")
    return str(request.param)


def test_grep_modes_case_glob_and_context(ws: Workspace, grep_engine: str) -> None:
    (ws.root / "a.py").write_text("one\nTODO fix\nthree\n")
    (ws.root / "b.txt").write_text("todo later\n")
    (ws.root / ".gitignore").write_text("ignored.py\n")
    (ws.root / "ignored.py").write_text("TODO hidden\n")
    grep = GrepTool()
    assert call(grep, ws, pattern="TODO").output == "a.py"
    assert call(grep, ws, pattern="todo", **{"-i": True}).output.splitlines() == ["a.py", "b.txt"]
    assert call(grep, ws, pattern="todo", glob="*.txt", **{"-i": True}).output == "b.txt"
    assert call(grep, ws, pattern="o", output_mode="count").output.splitlines() == [
        "a.py:1",
        "b.txt:1",
    ]
    content = call(grep, ws, pattern="TODO", output_mode="content", **{"-C": 1}).output
    assert content.splitlines() == ["a.py-1-one", "a.py:2:TODO fix", "a.py-3-three"]
    assert call(grep, ws, pattern="nothing").output == "No matches found"
    fails(grep, ws, "Invalid regular expression", pattern="(")
    fails(grep, ws, "output_mode", pattern="x", output_mode="lines")
    # A Python-only construct (lookahead) works whichever engine runs.
    assert call(grep, ws, pattern="TODO(?= fix)").output == "a.py"


def test_long_output_keeps_head_and_tail_with_marker() -> None:
    text = "H" * 100 + "M" * 1000 + "T" * 100
    cut = truncate(text, 200)
    assert cut.startswith("H" * 100) and cut.endswith("T" * 100)
    assert "[... 1000 characters truncated ...]" in cut
    assert truncate("short", 200) == "short"
