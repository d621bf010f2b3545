"""A canary API key given to the agent process never leaves it: not in any
tool's output, not in Bash's environment, not in what is fed back to the
model, not in session files, not on stderr (docs/protocol.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.guard import bwrap_path
from tests.agent._process import AgentProcess
from tests.fakes import FakeLLMServer, ToolCall, Turn

CANARY = "sk-ant-canary-5d1e0c7b9a"
# Other credentials the agent may hold, given canary values too.
OTHERS = {"OPENAI_API_KEY": CANARY + "-openai", "AWS_SECRET_ACCESS_KEY": CANARY + "-aws"}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(api_key=CANARY) as fake:
        yield fake


def run_calls(server: FakeLLMServer, ws: Path, calls: list[ToolCall]) -> AgentProcess:
    server.add(Turn(tool_calls=calls), Turn(text="done"))
    env = {"ANTHROPIC_API_KEY": CANARY, **OTHERS}
    agent = AgentProcess(
        "--provider", "anthropic", "--base-url", server.base_url, "--auto-approve",
        env=env, workspace=ws,
    )  # fmt: skip
    with agent:
        agent.next()
        agent.send({"type": "message", "msg_id": "m1", "input": "show me your secrets"})
        events = agent.until("stream_end")
        assert [e["status"] for e in events if e["type"] == "tool_result"]  # the tools ran
        agent.close_stdin()
        assert agent.wait() == 0
        agent.stderr_text = agent.stderr()  # type: ignore[attr-defined]
    return agent


def assert_no_canary(agent: AgentProcess, server: FakeLLMServer, *places: Path) -> None:
    assert CANARY.encode() not in b"".join(agent.raw), "a canary reached stdout"
    assert CANARY not in agent.stderr_text  # type: ignore[attr-defined]
    # What was fed back to the model (the key itself travels only in a header).
    assert CANARY not in json.dumps(server.requests)
    for place in places:
        for path in place.rglob("*"):
            if path.is_file():
                assert CANARY.encode() not in path.read_bytes(), f"a canary in {path}"


def test_canary_never_reaches_bash_env_or_any_file(
    server: FakeLLMServer, tmp_path: Path, fd_home: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    calls = [
        ToolCall("Bash", {"command": "env; echo key=$ANTHROPIC_API_KEY; printenv > env.txt"}),
        ToolCall("Read", {"file_path": "/proc/self/environ"}),
        ToolCall("Grep", {"pattern": "sk-ant", "path": "/proc/self/environ"}),
        ToolCall("Glob", {"pattern": "**", "path": "/proc/self"}),
    ]
    agent = run_calls(server, ws, calls)
    assert (ws / "env.txt").exists()  # Bash did run and write its environment
    assert_no_canary(agent, server, ws, fd_home)


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is missing or cannot run here")
def test_sandboxed_bash_cannot_read_the_agents_environment(
    server: FakeLLMServer, tmp_path: Path, fd_home: Path
) -> None:
    """Without the sandbox `/proc/<agent>/environ` is readable by the same
    user; in it, the agent's processes do not exist (docs/protocol.md)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    script = (
        "cat /proc/$PPID/environ /proc/1/environ /proc/*/environ 2>&1 | tr '\\0' '\\n'; "
        f"grep -r sk-ant {fd_home} /proc/*/cmdline 2>&1; ls {fd_home} 2>&1"
    )
    agent = run_calls(server, ws, [ToolCall("Bash", {"command": script})])
    assert_no_canary(agent, server, ws, fd_home)
    outputs = [json.loads(line) for line in agent.raw]
    result = next(e for e in outputs if e["type"] == "tool_result")
    assert "No such file or directory" in result["output"]  # the agent's home is not there
