"""`[agent.sandbox]`: parsing, and what the agent process announces about
the sandbox (`ready.capabilities.sandbox`, one `info` when it is off)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.agent import resolve_settings
from flightdeck.agent._app import SetupError, load_settings
from flightdeck.agent.tools import SandboxSettings
from flightdeck.guard import bwrap_path
from tests.agent._process import SANDBOX_NOTICE, AgentProcess
from tests.fakes import FakeLLMServer, ToolCall, Turn


def sandbox_of(value: Any) -> SandboxSettings:
    return resolve_settings({"workspace": "."}, {}, {"agent": {"sandbox": value}}).sandbox


def test_sandbox_defaults_and_forms() -> None:
    assert resolve_settings({"workspace": "."}, {}, {}).sandbox == SandboxSettings()
    assert SandboxSettings() == SandboxSettings(mode="auto", network="allow", env=())
    assert sandbox_of("required").mode == "required"
    table = sandbox_of({"mode": "off", "network": ["Example.com.", "a.test"], "env": ["GOPATH"]})
    assert table == SandboxSettings(mode="off", network=("a.test", "example.com"), env=("GOPATH",))
    assert sandbox_of({"network": "deny"}).network == "deny"


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("sometimes", "mode must be one of"),
        ({"network": "maybe"}, "network must be"),
        ({"network": ["http://x.test/"]}, "network must be"),
        ({"env": "PATH"}, "env must be a list"),
        ({"env": [""]}, "env must be a list"),
        ({"env": ["PATH", 1]}, "env must be a list"),
        ({"env": ["ANTHROPIC_API_KEY"]}, "credentials"),
        ({"colour": "red"}, "unknown keys: colour"),
        (3, "a mode or a table"),
    ],
)
def test_bad_sandbox_settings_are_config_errors(tmp_path: Path, value: Any, needle: str) -> None:
    """In a trusted workspace (an untrusted one's are ignored: test_untrusted_settings)."""
    import json

    from flightdeck.config import set_trust

    if isinstance(value, dict):  # JSON strings and lists are TOML values too
        lines = [f"{key} = {json.dumps(item)}" for key, item in value.items()]
        text = "[agent.sandbox]\n" + "\n".join(lines)
    else:
        text = f"[agent]\nsandbox = {json.dumps(value)}"
    (tmp_path / "flightdeck.toml").write_text(text + "\n")
    set_trust(tmp_path)
    with pytest.raises(SetupError, match=needle):
        load_settings({"workspace": str(tmp_path)}, {})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def start(server: FakeLLMServer, ws: Path, *, path: str | None = None) -> AgentProcess:
    env = {"ANTHROPIC_API_KEY": "test"}
    if path is not None:
        env["PATH"] = path  # no bwrap on it: the sandbox is off
    return AgentProcess(
        "--provider", "anthropic", "--base-url", server.base_url, "--auto-approve",
        env=env, workspace=ws,
    )  # fmt: skip


def info_lines(agent: AgentProcess) -> list[str]:
    import json

    events = [json.loads(line) for line in agent.raw]
    return [e["message"] for e in events if e["type"] == "info"]


def test_without_bubblewrap_ready_says_off_and_one_info_says_why(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.add(Turn(tool_calls=[ToolCall("Bash", {"command": "echo ran"})]), Turn(text="ok"))
    with start(server, tmp_path, path="/nonexistent") as agent:
        assert agent.next()["capabilities"]["sandbox"] == "off"
        agent.send({"type": "message", "msg_id": "m1", "input": "go"})
        events = agent.until("stream_end")
        result = next(e for e in events if e["type"] == "tool_result")
        assert result["status"] == "success" and "ran" in result["output"]
    notices = info_lines(agent)
    assert len(notices) == 1 and notices[0].startswith(SANDBOX_NOTICE)
    assert "bubblewrap is not installed or cannot create namespaces here" in notices[0]


def test_required_sandbox_without_bubblewrap_refuses_bash(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "flightdeck.toml").write_text('[agent.sandbox]\nmode = "required"\n')
    server.add(Turn(tool_calls=[ToolCall("Bash", {"command": "touch ran"})]), Turn(text="ok"))
    with start(server, tmp_path, path="/nonexistent") as agent:
        assert agent.next()["capabilities"]["sandbox"] == "off"
        agent.send({"type": "message", "msg_id": "m1", "input": "go"})
        events = agent.until("stream_end")
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["status"] == "error" and "requires a sandbox" in result["output"]
    assert not (tmp_path / "ran").exists()
    assert "error" not in [e["type"] for e in events]
    assert [m for m in info_lines(agent) if "Bash is disabled" in m]


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is missing or cannot run here")
def test_with_bubblewrap_ready_says_so_and_no_info(server: FakeLLMServer, tmp_path: Path) -> None:
    with start(server, tmp_path) as agent:
        assert agent.next()["capabilities"]["sandbox"] == "bubblewrap"
        agent.close_stdin()
        assert agent.wait() == 0
    assert info_lines(agent) == []


def test_the_agents_safe_path_is_the_sandbox_layouts() -> None:
    from flightdeck.agent.tools._sandbox import SAFE_PATH
    from flightdeck.guard import SandboxLayout

    assert SAFE_PATH == SandboxLayout.SAFE_PATH


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is missing or cannot run here")
def test_ripgreps_sandbox_shows_only_usr_and_the_workspace(tmp_path: Path) -> None:
    """The narrowed sandbox Grep runs ripgrep in: no /etc, /opt or home."""
    import subprocess

    from flightdeck.agent.tools._sandbox import sandbox_argv

    bwrap = bwrap_path()
    assert bwrap is not None
    argv = sandbox_argv(
        bwrap,
        tmp_path,
        ["/usr/bin/ls", "-A", "/"],
        env={},
        writable=False,
        network=False,
        system=("/usr",),
    )
    shown = set(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split())
    assert "usr" in shown and not shown & {"etc", "opt", "root", "home", "var"}
    assert shown <= {"usr", "bin", "sbin", "lib", "lib64", "proc", "dev", "tmp"}
