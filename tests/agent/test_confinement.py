"""Escape attempts against the file tools, one test per escape class
(docs/protocol.md, "What the tools confine"). Outside the workspace sits a
file holding CANARY; no tool output may ever contain it, and no tool may
create or change anything outside. Bash: tests/agent/test_bash_sandbox.py."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.agent.tools import (
    BashTool,
    EditTool,
    GlobTool,
    GrepTool,
    ReadTool,
    Tool,
    Workspace,
    WriteTool,
)
from tests.agent._escape import (
    CANARY,
    assert_untouched,
    attempt,
    engine,
    every_tool_on,
    outside,
    snapshot,
    ws,
)

__all__ = ["engine", "outside", "ws"]  # fixtures, used by name

# ---- ../ ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside/secret.txt", "sub/../../outside/secret.txt", ".."])
def test_dot_dot_is_refused_by_every_file_tool(
    ws: Workspace, outside: Path, engine: str, path: str
) -> None:
    (ws.root / "sub").mkdir()
    before = snapshot(outside)
    for out in every_tool_on(ws, path):
        assert out.startswith("failed:") and "outside the workspace" in out
    assert_untouched(outside, before)


# ---- absolute paths and /proc/self/root ----------------------------------------


def test_absolute_paths_outside_are_refused(ws: Workspace, outside: Path, engine: str) -> None:
    before = snapshot(outside)
    for path in [str(outside / "secret.txt"), str(outside / "dir"), "/etc/hostname"]:
        for out in every_tool_on(ws, path):
            assert out.startswith("failed:") and "outside the workspace" in out
    assert_untouched(outside, before)
    # An absolute path that names the workspace is fine.
    assert "inside" in attempt(ReadTool(), ws, file_path=str(ws.root / "inside.txt"))


def test_proc_self_root_is_refused(ws: Workspace, outside: Path, engine: str) -> None:
    before = snapshot(outside)
    via_proc = f"/proc/self/root{outside}/secret.txt"
    into_ws = f"/proc/self/root{ws.root}/inside.txt"  # another route to an inside file
    (ws.root / "proc-link").symlink_to(via_proc)
    for path in [via_proc, into_ws, "proc-link", "/proc/self/cwd/x", "/proc/self/environ"]:
        for out in every_tool_on(ws, path):
            assert out.startswith("failed:") and CANARY not in out
    assert_untouched(outside, before)


# ---- symlinks -------------------------------------------------------------------


def test_file_and_dir_symlinks_leaving_are_refused(
    ws: Workspace, outside: Path, engine: str
) -> None:
    (ws.root / "flink").symlink_to(outside / "secret.txt")
    (ws.root / "dlink").symlink_to(outside / "dir")
    (ws.root / "rel").symlink_to("../outside/secret.txt")
    before = snapshot(outside)
    for path in ["flink", "dlink", "dlink/secret.txt", "dlink/new.txt", "rel"]:
        for out in every_tool_on(ws, path):
            assert out.startswith("failed:") and "outside the workspace" in out, (path, out)
    # Searching the whole workspace lists link names but never reads through them.
    listing = attempt(GlobTool(), ws, pattern="**")
    assert "flink" in listing and "dlink/secret.txt" not in listing
    for mode in ("content", "files_with_matches", "count"):
        assert CANARY not in attempt(GrepTool(), ws, pattern="CANARY", output_mode=mode)
        assert "No matches" in attempt(GrepTool(), ws, pattern="CANARY", output_mode=mode)
    assert_untouched(outside, before)


def test_symlinks_that_stay_inside_keep_working(ws: Workspace) -> None:
    (ws.root / "d").mkdir()
    (ws.root / "d" / "f.txt").write_text("hello\n")
    (ws.root / "link.txt").symlink_to("d/f.txt")
    (ws.root / "dl").symlink_to(ws.root / "d")
    assert "hello" in attempt(ReadTool(), ws, file_path="link.txt")
    assert "hello" in attempt(ReadTool(), ws, file_path="dl/f.txt")
    attempt(EditTool(), ws, file_path="link.txt", old_string="hello", new_string="bye")
    assert (ws.root / "d" / "f.txt").read_text() == "bye\n"
    assert (ws.root / "link.txt").is_symlink()  # the link's target was edited, not the link


# ---- hard links -------------------------------------------------------------------


def test_hard_links_are_never_written_through(ws: Workspace, outside: Path) -> None:
    """A hard link placed in the workspace beforehand is the same file as its
    outside name; no path check can tell. Write and Edit replace the name, so
    the outside file keeps its content (docs/protocol.md)."""
    try:
        os.link(outside / "secret.txt", ws.root / "hard.txt")
    except OSError as exc:
        pytest.skip(f"cannot make a hard link here: {exc}")
    before = snapshot(outside)
    attempt(ReadTool(), ws, file_path="hard.txt")
    attempt(EditTool(), ws, file_path="hard.txt", old_string=CANARY, new_string="edited")
    assert "edited" in (ws.root / "hard.txt").read_text()
    attempt(WriteTool(), ws, file_path="hard.txt", content="written")
    assert (ws.root / "hard.txt").read_text() == "written"
    assert_untouched(outside, before)


# ---- swaps during a call ---------------------------------------------------------


@pytest.fixture
def swapping(ws: Workspace, outside: Path) -> Iterator[None]:
    """`sw` flips between a real directory and a link to the outside one."""
    real, link = ws.root / "sw.real", ws.root / "sw.link"
    real.mkdir()
    (real / "secret.txt").write_text("inside\n")
    link.symlink_to(outside / "dir")
    stop = threading.Event()

    def flip() -> None:
        target = ws.root / "sw"
        while not stop.is_set():
            for source in (real, link):
                try:
                    os.rename(source, target)
                    os.rename(target, source)
                except OSError:
                    pass

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.mark.usefixtures("swapping")
def test_swapping_a_dir_for_a_link_never_reads_or_writes_outside(
    ws: Workspace, outside: Path
) -> None:
    before = snapshot(outside)
    leaks = 0
    for i in range(300):
        for out in (
            attempt(ReadTool(), ws, file_path="sw/secret.txt"),
            attempt(WriteTool(), ws, file_path=f"sw/new{i}.txt", content="x"),
        ):
            leaks += CANARY in out
    assert leaks == 0
    assert_untouched(outside, before)


@pytest.mark.usefixtures("swapping")
def test_swapping_while_searching_never_reads_outside(ws: Workspace, engine: str) -> None:
    tries = 60 if engine == "ripgrep" else 100  # each ripgrep call starts a sandbox
    leaks = []
    for _ in range(tries):
        for out in (
            attempt(GrepTool(), ws, pattern="CANARY", output_mode="content"),
            attempt(GrepTool(), ws, pattern="CANARY", path="sw"),
            attempt(GlobTool(), ws, pattern="**/*.txt"),
        ):
            if CANARY in out or "outside-only" in out:
                leaks.append(out)
    assert leaks == []


# ---- unicode look-alikes ---------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "\u2024\u2024/outside/secret.txt",  # one-dot leaders
        "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
        "..\u2215outside\u2215secret.txt",  # division slash
        "..\uff0foutside\uff0fsecret.txt",  # fullwidth solidus
    ],
)
def test_unicode_look_alikes_are_plain_names(
    ws: Workspace, outside: Path, engine: str, path: str
) -> None:
    before = snapshot(outside)
    for out in every_tool_on(ws, path):
        assert CANARY not in out
    # Write created a file by that literal name, inside the workspace.
    assert_untouched(outside, before)
    assert any(ws.root.rglob("*secret.txt"))


def test_look_alike_of_the_workspace_root_is_outside(ws: Workspace, outside: Path) -> None:
    fake_root = str(ws.root)[:-1] + "\u0455"  # Cyrillic small dze looks like "s"
    for out in every_tool_on(ws, fake_root + "/inside.txt"):
        assert out.startswith("failed:") and "outside the workspace" in out


# ---- bad arguments -----------------------------------------------------------------

BAD_PATHS = ["a\x00b", "x" * 5000, "d/" + "n" * 300, "\ud800", ""]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_bad_path_arguments_fail_as_tool_results(ws: Workspace, path: str) -> None:
    for out in every_tool_on(ws, path):
        assert out.startswith("failed:")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (ReadTool(), {"file_path": 3}),
        (ReadTool(), {"file_path": "inside.txt", "offset": "x"}),
        (WriteTool(), {"file_path": ["a"], "content": "x"}),
        (WriteTool(), {"file_path": "a.txt", "content": "\ud800"}),
        (EditTool(), {"file_path": "inside.txt", "old_string": None, "new_string": "x"}),
        (GlobTool(), {"pattern": 1}),
        (GrepTool(), {"pattern": "a\x00"}),
        (GrepTool(), {"pattern": "a", "glob": 5}),
        (BashTool(), {"command": "echo \x00"}),
        (BashTool(), {"command": {"x": 1}}),
    ],
)
def test_wrong_arguments_fail_as_tool_results(ws: Workspace, tool: Tool, args: Any) -> None:
    assert attempt(tool, ws, **args).startswith("failed:")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=st.text(alphabet=st.characters(codec=None), max_size=40))
def test_any_path_string_reads_or_fails_cleanly(ws: Workspace, path: str) -> None:
    out = attempt(ReadTool(), ws, file_path=path)
    assert CANARY not in out


def test_fifos_are_refused_without_hanging(ws: Workspace) -> None:
    os.mkfifo(ws.root / "pipe")
    for out in (
        attempt(ReadTool(), ws, file_path="pipe"),
        attempt(EditTool(), ws, file_path="pipe", old_string="a", new_string="b"),
        attempt(WriteTool(), ws, file_path="pipe", content="x"),
    ):
        assert out.startswith("failed:") and "not a regular file" in out
    assert "No matches" in attempt(GrepTool(), ws, pattern="x", path=".")


def test_bad_arguments_reach_the_model_as_failed_results_not_error_events(
    tmp_path: Path,
) -> None:
    """Issue 11: a NUL byte or an over-long path used to end as an `error`
    event (`tool_error`); now the model gets a failed `tool_result`."""
    from flightdeck.agent import protocol as p
    from tests.agent._harness import Harness, Step, types

    calls = [
        ("t1", "Read", {"file_path": "a\x00b"}),
        ("t2", "Write", {"file_path": "x" * 5000, "content": "x"}),
        ("t3", "Grep", {"pattern": "\x00"}),
        ("t4", "Edit", {"file_path": "/proc/self/root/etc/passwd", "old_string": "a"}),
    ]

    async def body() -> list[p.Event]:
        h = Harness(tmp_path, [Step(calls=calls), Step(text="ok")], mode="yolo")
        await h.send({"type": "message", "msg_id": "m1", "input": "go"})
        return await h.until("stream_end")

    events = asyncio.run(body())
    assert "error" not in types(events)
    results = [e for e in events if isinstance(e, p.ToolResultEvent)]
    assert [r.status for r in results] == ["error"] * 4
