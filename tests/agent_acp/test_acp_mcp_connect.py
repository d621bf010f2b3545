"""ACP sessions and MCP servers, through a real `flightdeck agent --acp`:
the client's servers connect together under the user's `[mcp]
connect_timeout`, and a workspace's own servers wait for the user's trust."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp.schema import McpServerStdio

from tests.agent_acp._harness import Agent, workspace
from tests.agent_ext._common import SERVERS
from tests.agent_ext.test_workspace_trust_process import probe_toml
from tests.fakes import FakeLLMServer, Turn

KEY = {"ANTHROPIC_API_KEY": "test"}
HUNG = SERVERS / "hung_server.py"


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    home = tmp_path_factory.mktemp("acphome")
    (home / "config").mkdir()
    (home / "config" / "config.toml").write_text("[mcp]\nconnect_timeout = 5\n")
    running = Agent({**KEY, "FLIGHTDECK_HOME": str(home)}, "--provider", "anthropic")
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def hung(name: str, log: Path) -> McpServerStdio:
    return McpServerStdio(name=name, command=sys.executable, args=[str(HUNG), str(log)], env=[])


def test_the_clients_servers_connect_together_under_one_deadline(
    agent: Agent, server: FakeLLMServer, tmp_path: Path
) -> None:
    """Three servers that never answer `initialize`: every one is started
    before any is given up on, and `session/new` takes about one
    `connect_timeout` (5 s here, time enough for a loaded machine to start
    them), not three of the 10 s default."""
    log = tmp_path / "hung.log"
    ws = workspace(tmp_path / "ws", server, home=agent.home)
    servers = [hung(f"h{i}", log) for i in range(3)]
    began = time.monotonic()
    session = agent.call(agent.conn.new_session(cwd=str(ws), mcp_servers=servers), 120)
    took = time.monotonic() - began
    assert session.session_id
    deadline = time.monotonic() + 30
    while log.read_text().count("end") < 3:  # each server notes its end as it is stopped
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    words = [line.split()[0] for line in log.read_text().splitlines()]
    assert words == ["start"] * 3 + ["end"] * 3, words
    # one deadline of 5 s; one after another at the 10 s default would be 30 s
    assert took < 20, took


def test_a_workspaces_own_servers_wait_for_trust_the_clients_start(
    agent: Agent, server: FakeLLMServer, tmp_path: Path
) -> None:
    ran = tmp_path / "workspace-server-ran"
    ws = workspace(tmp_path / "ws", server, probe_toml("probe", ran), home=None)
    log = tmp_path / "hung.log"
    server.add(Turn(text="ok"))
    agent.call(agent.conn.new_session(cwd=str(ws), mcp_servers=[hung("client", log)]), 120)
    assert not ran.exists(), "the workspace's server command ran"
    assert log.read_text().startswith("start "), "the client's server did not start"
