"""Escape attempts against every built-in tool, one test per escape class
(docs/protocol.md, "What the tools confine"). Outside the workspace sits a
file holding CANARY; no tool output may ever contain it, and no tool may
create or change anything outside."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

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


# ---- Bash in the sandbox -----------------------------------------------------------


@needs_bwrap
def test_bash_cannot_read_or_write_outside(ws: Workspace, outside: Path) -> None:
    (ws.root / "flink").symlink_to(outside / "secret.txt")
    (ws.root / "dlink").symlink_to(outside / "dir")
    before = snapshot(outside)
    script = (
        f"cat {outside}/secret.txt ../outside/secret.txt flink dlink/secret.txt "
        f"/proc/self/root{outside}/secret.txt /proc/1/root{outside}/secret.txt; "
        f"echo x > {outside}/new; echo x > dlink/new; echo x >> flink; "
        f"ln {outside}/secret.txt hard; cp -r {outside} copied; ls ~ /home /root; "
        "echo inside > ws-file.txt"
    )
    out = attempt(BashTool(), ws, command=script)
    assert CANARY not in out
    assert_untouched(outside, before)
    assert (ws.root / "ws-file.txt").read_text() == "inside\n"  # the workspace is writable
    assert not (ws.root / "hard").exists() and not (ws.root / "copied").exists()


@needs_bwrap
def test_bash_sees_a_private_tmp_and_no_home(ws: Workspace, tmp_path: Path) -> None:
    # The workspace lives under the host's /tmp here; only it is brought in.
    (tmp_path / "beside-the-workspace.txt").write_text("host tmp\n")
    out = attempt(BashTool(), ws, command=f"echo $HOME; ls -A {tmp_path}; ls /home /root 2>&1")
    assert out.splitlines()[2:4] == ["/tmp", "ws"]
    assert "beside-the-workspace" not in out and "outside" not in out
    assert "No such file or directory" in out


@needs_bwrap
@pytest.mark.parametrize("network", ["allow", "deny"])
def test_bash_network_setting(ws: Workspace, network: Literal["allow", "deny"]) -> None:
    """`deny` leaves the command a network namespace of its own with only
    loopback: even a server on the host's loopback is out of reach."""
    from dataclasses import replace

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        ws.sandbox = replace(ws.sandbox, network=network)
        command = f"echo hi > /dev/tcp/127.0.0.1/{port} && echo TCP-OK; cat /proc/net/dev"
        out = attempt(BashTool(), ws, command=command)
    finally:
        server.close()
    table = out.split("stdout:\n", 1)[-1].split("stderr:", 1)[0].splitlines()
    interfaces = [line.split(":")[0].strip() for line in table if "|" not in line and ":" in line]
    if network == "deny":
        assert "TCP-OK" not in out and interfaces == ["lo"], out
    else:
        assert "TCP-OK" in out, out


def test_sandbox_required_refuses_bash_without_bubblewrap(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flightdeck.agent.tools import SandboxSettings

    monkeypatch.setattr("flightdeck.guard.bwrap_path", lambda: None)
    ws.sandbox = SandboxSettings(mode="required")
    marker = ws.root / "ran"
    out = attempt(BashTool(), ws, command=f"touch {marker}")
    assert out.startswith("failed:") and "requires a sandbox" in out
    assert not marker.exists()
    ws.sandbox = SandboxSettings(network="deny")
    assert attempt(BashTool(), ws, command=f"touch {marker}").startswith("failed:")
    assert not marker.exists()
    ws.sandbox = SandboxSettings()  # auto: runs unconfined, environment still filtered
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    out = attempt(BashTool(), ws, command=f"touch {marker}; env")
    assert marker.exists() and CANARY not in out


@needs_bwrap
def test_bash_network_hosts_go_through_the_egress_proxy(ws: Workspace) -> None:
    """`network = [hosts]`: no direct connection; the listed hosts through
    the proxy, any other host refused and named in the output."""
    import http.server
    from dataclasses import replace

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello from the host")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    fetch = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=10).read())"
    command = (
        f"python3 -c '{fetch}' http://127.0.0.1:{port}/ 2>&1 | tail -1; "
        f"python3 -c '{fetch}' http://localhost:{port}/ 2>&1 | tail -1; "
        f"echo hi > /dev/tcp/127.0.0.1/{port} && echo DIRECT-OK"
    )
    try:
        ws.sandbox = replace(ws.sandbox, network=("127.0.0.1",))
        out = attempt(BashTool(), ws, command=command)
    finally:
        server.shutdown()
    assert "hello from the host" in out
    assert "403" in out and "network: refused localhost" in out
    assert "DIRECT-OK" not in out


def test_fifos_are_refused_without_hanging(ws: Workspace) -> None:
    os.mkfifo(ws.root / "pipe")
    for out in (
        attempt(ReadTool(), ws, file_path="pipe"),
        attempt(EditTool(), ws, file_path="pipe", old_string="a", new_string="b"),
        attempt(WriteTool(), ws, file_path="pipe", content="x"),
    ):
        assert out.startswith("failed:") and "not a regular file" in out
    assert "No matches" in attempt(GrepTool(), ws, pattern="x", path=".")


@needs_bwrap
def test_bash_sees_system_secrets_masked(ws: Workspace) -> None:
    present = [p for p in ("/etc/shadow", "/etc/ssh") if os.path.exists(p)]
    if not present:
        pytest.skip("this host has neither /etc/shadow nor /etc/ssh")
    out = attempt(
        BashTool(), ws, command="cat /etc/shadow 2>/dev/null | wc -c; ls -A /etc/ssh | wc -l"
    )
    assert out.splitlines()[2:4] == ["0", "0"]


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
