"""Bash in the sandbox: what a command can and cannot reach
(docs/protocol.md, "What the tools confine")."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import uuid
from pathlib import Path
from typing import Any, Literal

import pytest

from flightdeck.agent.tools import BashTool, Workspace
from flightdeck.guard import bwrap_path
from tests.agent._escape import (
    CANARY,
    assert_untouched,
    attempt,
    needs_bwrap,
    outside,
    snapshot,
    ws,
)
from tests.guard._attacks import (
    assert_unprivileged,
    attack_script,
    attempt_line,
    without_user_namespaces,
)

BWRAP = bwrap_path()

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


# ---- an agent started as root (issue 28) -------------------------------------------


def _real_shadow_line() -> str | None:
    """A line only the host's /etc/shadow holds (readable here as root)."""
    try:
        lines = Path("/etc/shadow").read_text().splitlines()
        return next(line for line in lines if line)
    except (OSError, StopIteration):
        return None


ROOT_PLACES = ["/", "/usr", "/opt", "/etc", "/etc/shadow"]


def _root_attack(ws: Workspace, marker: str) -> str:
    script = attack_script(
        remount=[*ROOT_PLACES, str(ws.root)],
        write=[marker, "/planted"],
        unmount=["/etc/shadow", "/etc/ssh"],
    )
    # A user namespace of its own would give back every capability there:
    # bubblewrap's mounts are locked against it (and where bubblewrap can,
    # it refuses new user namespaces outright).
    for unshare in ("unshare -U -r -m", "unshare -U -m"):
        for what, inner in (
            ("nested remount", f"mount -o remount,rw,bind /opt && touch {marker}"),
            ("nested umount", "umount /etc/shadow && grep -q : /etc/shadow"),
        ):
            script += attempt_line(f"{unshare} sh -c '{inner}'", f"{what} ({unshare})", "")
    script += "cat /etc/shadow\n"
    script += "unshare -U true && echo 'new userns: made' || echo 'new userns: no'\n"
    return attempt(BashTool(), ws, command=script)


@needs_bwrap
def test_bash_holds_no_privilege_and_cannot_remount_unmount_or_write_opt(ws: Workspace) -> None:
    """As root the sandbox kept every capability: Bash unmounted the file
    covering /etc/shadow, read the real one, and wrote to the host's /opt."""
    marker = f"/opt/flightdeck-escape-{uuid.uuid4().hex}"
    try:
        out = _root_attack(ws, marker)
        assert not os.path.exists(marker)
    finally:
        Path(marker).unlink(missing_ok=True)
    shadow = _real_shadow_line()
    assert shadow is None or shadow not in out
    expected = (len(ROOT_PLACES) + 1) * 4 + 2 + 2 * 4 + 4
    assert_unprivileged(out, expected_attempts=expected)
    assert "new userns: no" in out
    # ...and the workspace is still Bash's to write.
    assert "exit code" in attempt(BashTool(), ws, command="echo ok > written.txt")
    assert (ws.root / "written.txt").read_text() == "ok\n"


@needs_bwrap
def test_without_user_namespaces_root_still_holds_no_capability(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel allows no user namespace the sandbox stays root's
    uid but without any capability, and every attack is still refused."""
    from flightdeck.guard import bwrap_path, bwrap_privileges

    with without_user_namespaces(tmp_path / "no-userns", monkeypatch) as wrapper:
        assert bwrap_path() == str(wrapper)
        assert bwrap_privileges() == ("--cap-drop", "ALL")
        marker = f"/opt/flightdeck-escape-{uuid.uuid4().hex}"
        try:
            out = _root_attack(ws, marker)
            assert not os.path.exists(marker)
        finally:
            Path(marker).unlink(missing_ok=True)
    shadow = _real_shadow_line()
    assert shadow is None or shadow not in out
    expected = (len(ROOT_PLACES) + 1) * 4 + 2 + 2 * 4 + 4
    assert_unprivileged(out, expected_attempts=expected, as_nobody=False)


# Every name the agent's provider credentials go by (docs/protocol.md).
CREDENTIAL_NAMES = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_PROFILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
]


@pytest.mark.parametrize("sandboxed", [True, False])
def test_no_credential_reaches_bash_even_when_listed(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, sandboxed: bool
) -> None:
    from flightdeck.agent.tools import SandboxSettings

    if sandboxed and BWRAP is None:
        pytest.skip("bubblewrap is missing or cannot create namespaces here")
    if not sandboxed:
        monkeypatch.setattr("flightdeck.guard.bwrap_path", lambda: None)
    for name in CREDENTIAL_NAMES:
        monkeypatch.setenv(name, f"{CANARY}-{name}")
    monkeypatch.setenv("FLIGHTDECK_LISTED", "listed-and-passed")
    # Listed anyway (the settings parser refuses this; a caller building
    # them directly must not get them either).
    ws.sandbox = SandboxSettings(env=(*CREDENTIAL_NAMES, "FLIGHTDECK_LISTED"))
    out = attempt(BashTool(), ws, command="env")
    assert "listed-and-passed" in out
    assert [name for name in CREDENTIAL_NAMES if f"{CANARY}-{name}" in out] == []
    assert CANARY not in out


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_listing_a_credential_is_a_config_error(name: str) -> None:
    from flightdeck.agent.tools import SandboxConfigError, parse_sandbox

    with pytest.raises(SandboxConfigError, match=name):
        parse_sandbox({"env": ["PATH", name]})


# Every secret under /etc the sandbox covers (docs/protocol.md).
MASKED_FILES = ["shadow", "shadow-", "gshadow", "gshadow-", "sudoers"]
MASKED_DIRS = ["ssh", "ssl/private", "sudoers.d"]
MASK_PROBE = """
import asyncio, sys
from pathlib import Path
from flightdeck.agent.tools import BashTool, Workspace
out = asyncio.run(BashTool().run({"command": sys.argv[2]}, Workspace(Path(sys.argv[1]))))
print(out.output)
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="makes a private mount namespace: runs as root")
def test_every_secret_under_etc_is_masked_even_against_root(ws: Workspace, tmp_path: Path) -> None:
    """Whatever this host has: in a private mount namespace the test puts
    each secret file and directory into a copy of /etc, then Bash (root
    inside the agent) tries to read them, unmounting the masks first."""
    import subprocess
    import sys

    fake = tmp_path / "etc"
    setup = [f"cp -a /etc/. {fake}/"]
    setup += [f"echo {CANARY}-{name} > {fake}/{name}" for name in MASKED_FILES]
    for name in MASKED_DIRS:
        setup += [f"mkdir -p {fake}/{name}", f"echo {CANARY}-{name} > {fake}/{name}/key"]
    paths = [f"/etc/{n}" for n in MASKED_FILES] + [f"/etc/{n}/key" for n in MASKED_DIRS]
    tries = [f"umount /etc/{n}" for n in [*MASKED_FILES, *MASKED_DIRS]]
    command = "; ".join([*tries, *(f"cat {p}" for p in paths), "ls -A /etc/ssh"])
    script = "\n".join(
        [
            "set -e",
            f"mkdir {fake}",
            *setup,
            f"mount --bind {fake} /etc",
            f"cat {' '.join(paths)} | grep -c {CANARY}",  # the host view has them all
            f'exec {sys.executable} -c "$0" {ws.root} "$1"',
        ]
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, MASK_PROBE, command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen, _, out = done.stdout.partition("\n")
    assert seen == str(len(paths))
    assert "exit code" in out
    assert [p for p in MASKED_FILES + MASKED_DIRS if f"{CANARY}-{p}" in out] == []


@needs_bwrap
@pytest.mark.skipif(shutil.which("rg") is None, reason="needs ripgrep: apt-get install ripgrep")
def test_ripgrep_runs_without_privilege(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Grep's ripgrep starts in the same unprivileged sandbox, with the
    workspace read-only: the sandbox it got is tried with the root attacks."""
    import subprocess

    from flightdeck.agent.tools import GrepTool, _grep

    built: list[list[str]] = []

    def spy(*args: Any, **kwargs: Any) -> list[str]:
        built.append(_sandbox_argv(*args, **kwargs))
        return built[-1]

    _sandbox_argv = _grep.sandbox_argv
    monkeypatch.setattr(_grep, "sandbox_argv", spy)
    assert attempt(GrepTool(), ws, pattern="inside") == "inside.txt"
    assert len(built) == 1
    places = ["/", "/usr", str(ws.root)]
    script = attack_script(
        remount=places, write=[f"{ws.root}/planted", "/planted"], unmount=["/usr"]
    )
    sandbox = built[0][: built[0].index("--") + 1]
    done = subprocess.run(
        [*sandbox, "/bin/sh", "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert_unprivileged(done.stdout, expected_attempts=len(places) * 4 + 2 + 4)
    assert not (ws.root / "planted").exists()


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="needs files of another user: runs as root")
def test_root_bash_writes_what_root_owns_and_no_longer_what_others_do(ws: Workspace) -> None:
    """Without CAP_DAC_OVERRIDE an agent run as root writes its own (root's)
    files as before, and another user's only as their modes allow."""
    mine, theirs = ws.root / "mine.txt", ws.root / "theirs.txt"
    mine.write_text("a\n")
    theirs.write_text("b\n")
    os.chown(theirs, 1000, 1000)
    out = attempt(BashTool(), ws, command="echo x >> mine.txt; echo x >> theirs.txt; id -u")
    assert mine.read_text() == "a\nx\n" and theirs.read_text() == "b\n"
    assert "Permission denied" in out and "65534" in out
