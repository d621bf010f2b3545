"""Workspace trust through real agent processes: a cloned repository's
`flightdeck.toml` MCP servers and `.drivers/` code start only when the user
trusts the workspace (their config.toml, `config trust`, the host's
`--trust-workspace`, a yes in the terminal chat); servers of the user's own
config and those the host passes always start."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.config import config_dir
from tests.agent._process import FLIGHTDECK
from tests.agent_ext._common import SERVERS, anthropic, make_ws, msg, of_type, stdio_server_toml
from tests.agent_ext._manifest_ws import MODULE, manifest_workspace
from tests.agent_ext.test_terminal_pty import Terminal
from tests.fakes import FakeLLMServer, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def probe_toml(name: str, marker: Path) -> str:
    """A server table whose command only leaves `marker` behind: whether it ran."""
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    return f"[mcp.servers.{name}]\ncommand = {sys.executable!r}\nargs = ['-c', {code!r}]\n"


def cloned(root: Path, extra: str = "") -> tuple[Path, Path, Path]:
    """A repository as cloned: a server command and an SDK driver whose code
    leaves a marker when imported. Nothing in the user's config trusts it."""
    ran = root.parent / f"{root.name}-server-ran"
    ws = manifest_workspace(make_ws(root, probe_toml("probe", ran) + extra, trusted=False))
    imported = root.parent / f"{root.name}-driver-imported"
    plant = f"\nimport pathlib\npathlib.Path({str(imported)!r}).write_text('yes')\n"
    (ws / "pkgs" / "notesmod" / "__init__.py").write_text(MODULE + plant)
    return ws, ran, imported


def start_and_stop(server: FakeLLMServer, ws: Path, *extra: str) -> tuple[dict, list[dict]]:  # type: ignore[type-arg]
    """`ready` and the lines after it up to the answer to one message."""
    server.add(Turn(text="ok"))
    with anthropic(server, ws, *extra) as agent:
        ready = agent.next()
        agent.send(msg("m1"))
        events = agent.until("stream_end")
    return ready, events


def test_an_untrusted_workspace_starts_no_server_and_imports_no_driver(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws, ran, imported = cloned(tmp_path / "repo")
    ready, events = start_and_stop(server, ws)
    assert not ran.exists(), "the workspace's server command ran"
    assert not imported.exists(), "the workspace's driver code was imported"
    probe = ready["capabilities"]["mcp_servers"]["probe"]
    assert probe["connected"] is False and probe["error_code"] == "workspace.untrusted"
    assert probe["error"] == "not started: the workspace is not trusted"
    [notice] = [e for e in of_type(events, "info") if "not trusted" in e["message"]]
    text = notice["message"]
    assert "workspace.untrusted" in text and f"flightdeck config trust {ws}" in text
    assert "--trust-workspace" in text and "MCP server probe" in text and ".drivers" in text


def test_a_workspace_cannot_trust_itself(server: FakeLLMServer, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    ws, ran, imported = cloned(root, f"[trust]\nworkspaces = [{str(root)!r}]\n")
    text = (
        (ws / "flightdeck.toml")
        .read_text()
        .replace("[agent]\n", "[agent]\ntrust_workspace = true\n")
    )
    (ws / "flightdeck.toml").write_text(text)
    ready, _ = start_and_stop(server, ws)
    assert not ran.exists() and not imported.exists()
    assert ready["capabilities"]["mcp_servers"]["probe"]["error_code"] == "workspace.untrusted"


def test_config_trust_then_the_workspace_starts_what_it_names(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws, ran, imported = cloned(tmp_path / "repo")
    done = subprocess.run(
        [FLIGHTDECK, "config", "trust", str(ws)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    start_and_stop(server, ws)
    assert ran.exists() and imported.exists()


def test_the_hosts_flag_trusts_the_workspace_for_that_start(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws, ran, imported = cloned(tmp_path / "repo")
    start_and_stop(server, ws, "--trust-workspace")
    assert ran.exists() and imported.exists()
    assert not (config_dir() / "config.toml").exists()  # nothing was remembered


def test_user_servers_start_but_a_workspace_change_to_one_is_held(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """The user's own servers are the user's choice; a workspace table that
    changes one of them (here its `args`) makes it a workspace server."""
    mine, theirs = tmp_path / "mine-ran", tmp_path / "changed-ran"
    config_dir().mkdir(parents=True, exist_ok=True)
    user = probe_toml("mine", mine) + probe_toml("shared", tmp_path / "shared-user-ran")
    (config_dir() / "config.toml").write_text(user)
    code = f"import pathlib; pathlib.Path({str(theirs)!r}).write_text('ran')"
    ws = make_ws(
        tmp_path / "repo", f"[mcp.servers.shared]\nargs = ['-c', {code!r}]\n", trusted=False
    )
    ready, _ = start_and_stop(server, ws)
    servers = ready["capabilities"]["mcp_servers"]
    assert mine.exists() and servers["mine"].get("error_code") != "workspace.untrusted"
    assert not theirs.exists() and not (tmp_path / "shared-user-ran").exists()
    assert servers["shared"]["error_code"] == "workspace.untrusted"


def test_list_tools_starts_nothing_of_an_untrusted_workspace(tmp_path: Path) -> None:
    ws, ran, imported = cloned(tmp_path / "repo")
    done = subprocess.run(
        [FLIGHTDECK, "agent", "--list-tools", "--workspace", str(ws), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert not ran.exists() and not imported.exists()
    assert report["mcp_servers"]["probe"]["error_code"] == "workspace.untrusted"
    assert any("not trusted" in p for p in report["problems"])


def test_the_terminal_chat_asks_before_starting_anything(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """No: nothing starts, and the notice says how to trust. Always: it
    starts, and the next start asks nothing (the user's config remembers)."""
    ws = make_ws(tmp_path / "repo", stdio_server_toml(), trusted=False)
    pid_file = ws / "notes-server.pid"  # the notes server writes it when it starts
    term = Terminal(ws, server)
    try:
        term.expect("would start:")
        term.expect("MCP server notes")
        term.expect("trust it?")
        term.type("n\r")
        term.expect("is not trusted")
        term.expect("you ›")
        assert not pid_file.exists()
        term.type("\x04")
        assert term.wait() == 0
    finally:
        term.close()
    term = Terminal(ws, server)
    try:
        term.expect("trust it?")
        term.type("a\r")
        term.expect("you ›")
        assert pid_file.exists()
        term.type("\x04")
        assert term.wait() == 0
    finally:
        term.close()
    pid_file.unlink()
    term = Terminal(ws, server)
    try:
        seen = term.expect("you ›")
        assert "trust it?" not in seen and pid_file.exists()
        term.type("\x04")
        assert term.wait() == 0
    finally:
        term.close()


def test_add_mcp_server_uses_the_users_connect_timeout(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """A host's server that never answers `initialize` is given up on after
    the user's `[mcp] connect_timeout` (1.5 s here), not the 10 s default."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text("[mcp]\nconnect_timeout = 1.5\n")
    ws = make_ws(tmp_path / "ws", trusted=False)
    log = tmp_path / "hung.log"
    with anthropic(server, ws) as agent:
        agent.next()  # ready
        agent.send(
            {
                "type": "add_mcp_server",
                "name": "hung",
                "transport": "stdio",
                "command": sys.executable,
                "args": [str(SERVERS / "hung_server.py"), str(log)],
                "env": {},
            }
        )
        info = agent.next(timeout=60)
    assert info["type"] == "info", info
    assert info["message"] == (
        "MCP server hung unavailable: no answer within 1.5 s ([mcp] connect_timeout)"
    )
