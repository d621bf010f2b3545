"""Bash in the sandbox: what a command can and cannot reach
(docs/protocol.md, "What the tools confine")."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any, Literal

import pytest

from flightdeck.agent.tools import BashTool, Workspace
from tests.agent._escape import (
    CANARY,
    assert_untouched,
    attempt,
    needs_bwrap,
    outside,
    snapshot,
    ws,
)

__all__ = ["outside", "ws"]  # fixtures, used by name


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
    from msgspec.structs import replace

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

    from msgspec.structs import replace

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


@needs_bwrap
def test_bash_sees_system_secrets_masked(ws: Workspace) -> None:
    present = [p for p in ("/etc/shadow", "/etc/ssh") if os.path.exists(p)]
    if not present:
        pytest.skip("this host has neither /etc/shadow nor /etc/ssh")
    out = attempt(
        BashTool(), ws, command="cat /etc/shadow 2>/dev/null | wc -c; ls -A /etc/ssh | wc -l"
    )
    assert out.splitlines()[2:4] == ["0", "0"]
