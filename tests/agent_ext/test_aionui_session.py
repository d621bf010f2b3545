"""AionUi's session flows (issue 13): resume fallback, its approval store,
add_mcp_server, a message during a turn, and end of input (a pipe)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent._process import FLIGHTDECK
from tests.agent_ext._aionui import content, errors, spawn, text_of, workspace
from tests.agent_ext._common import NOTES_SERVER
from tests.fakes import FakeLLMServer, ToolCall, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_resume_of_an_unseen_id_starts_it_fresh(server: FakeLLMServer, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="first"), Turn(text="second"))
    with spawn(server, ws, session=("--resume", "conv-9")) as agent:
        ready = agent.next()
        assert ready["type"] == "ready" and ready["session_id"] == "conv-9"
        info = agent.next()
        assert info["type"] == "info" and "conv-9 not found" in info["message"]
        agent.send(content("m1", "remember 7"))
        agent.until("stream_end")
        agent.close_stdin()
        assert agent.wait() == 0
    with spawn(server, ws, session=("--resume", "conv-9")) as agent:
        assert agent.next()["session_id"] == "conv-9"
        agent.send(content("m2", "what number?"))
        events = agent.until("stream_end")
        assert not [e for e in events if e["type"] == "info"]
    assert "remember 7" in json.dumps(server.requests[-1]["messages"])


def test_always_allow_on_bash_remembers_the_root_command(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """AionUi keys shell approvals by root command: `echo` approved for always
    does not approve `ls`."""
    ws = workspace(tmp_path)
    server.add(
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo one"})]),
        Turn(text="done one"),
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo two"})]),
        Turn(text="done two"),
        Turn(tool_calls=[ToolCall("Bash", {"command": "ls"})]),
        Turn(text="done ls"),
    )
    with spawn(server, ws) as agent:
        agent.next()
        agent.send(content("m1", "say one"))
        request = agent.until("tool_request")[-1]
        assert request["tool"]["category"] == "exec"
        agent.send({"type": "tool_approve", "call_id": request["call_id"], "scope": "always"})
        agent.until("stream_end")
        agent.send(content("m2", "say two"))
        events = agent.until("stream_end")
        assert "tool_request" not in [e["type"] for e in events]
        assert [e["output"].endswith("two") for e in events if e["type"] == "tool_result"] == [True]
        agent.send(content("m3", "list"))
        asked = agent.until("tool_request")[-1]
        assert asked["tool"]["args"] == {"command": "ls"}
        agent.send({"type": "tool_deny", "call_id": asked["call_id"], "reason": ""})
        events = agent.until("stream_end")
        assert [e["type"] for e in events].count("tool_cancelled") == 1


def test_add_mcp_server_before_the_first_message(server: FakeLLMServer, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="ok"))
    with spawn(server, ws, provider="anthropic", model="claude-test") as agent:
        assert agent.next()["capabilities"]["mcp"] is False
        agent.send(
            {
                "type": "add_mcp_server",
                "name": "notes",
                "transport": "stdio",
                "command": sys.executable,
                "args": [str(NOTES_SERVER)],
                "env": {},
            }
        )
        ready = agent.until("mcp_ready")[-1]
        assert ready["name"] == "notes" and "mcp__notes__remember" in ready["tools"]
        agent.send({"type": "add_mcp_server", "name": "ghost", "transport": "stdio"})
        assert "needs a command" in agent.next()["message"]
        agent.send(content("m1", "hi"))
        agent.until("stream_end")
        agent.send({"type": "add_mcp_server", "name": "late", "transport": "stdio", "command": "x"})
        late = agent.next()
        assert (
            late["error"]["code"] == "protocol_error"
            and "before the first" in late["error"]["message"]
        )
    assert "mcp__notes__remember" in {t["name"] for t in server.requests[0]["tools"]}


def test_message_during_a_turn_is_queued(server: FakeLLMServer, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="a" * 30, delta_size=1, delta_delay=0.03), Turn(text="second answer"))
    with spawn(server, ws) as agent:
        agent.next()
        agent.send(content("m1", "first"))
        agent.until("text_delta")
        agent.send(content("m2", "second"))
        events = agent.until("stream_end")
        queued = [e for e in events if e["type"] == "info"]
        assert queued and queued[0]["msg_id"] == "m2" and not errors(events)
        assert events[-1]["msg_id"] == "m1"
        events = agent.until("stream_end")
        assert events[0] == {"type": "stream_start", "msg_id": "m2"}
        assert text_of(events) == "second answer"


def test_a_piped_message_prints_its_answer(server: FakeLLMServer, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="Hi there!"))
    line = '{"type":"message","msg_id":"a","input":"hi"}\n'
    proc = subprocess.run(
        [FLIGHTDECK, "agent", "--json-stream", "--base-url", server.base_url],
        input=line.encode(),
        capture_output=True,
        cwd=ws,
        env={**_env(), "ANTHROPIC_API_KEY": "k"},
        timeout=60,
        check=False,
    )
    events = [json.loads(x) for x in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    assert [e["type"] for e in events][-1] == "stream_end"
    assert text_of(events) == "Hi there!"


def test_end_of_input_denies_pending_approvals_and_finishes(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(tool_calls=[ToolCall("Bash", {"command": "touch made"})]), Turn(text="ok"))
    with spawn(server, ws) as agent:
        agent.next()
        agent.send(content("m1", "make a file"))
        agent.until("tool_request")
        agent.close_stdin()
        events = agent.until("stream_end")
        cancelled = [e for e in events if e["type"] == "tool_cancelled"]
        assert [e["reason"] for e in cancelled] == ["client closed input"]
        assert text_of(events) == "ok"
        assert agent.wait() == 0
    assert not (ws / "made").exists()
    assert "client closed input" in json.dumps(server.requests[-1]["messages"])


def test_sigterm_while_finishing_after_end_of_input_cancels_at_once(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="z" * 400, delta_size=1, delta_delay=0.05))
    with spawn(server, ws) as agent:
        agent.next()
        agent.send(content("m1", "long"))
        agent.until("text_delta")
        agent.close_stdin()
        agent.signal(signal.SIGTERM)
        events = agent.until("stream_end")
        assert len(text_of(events)) < 400
        assert agent.wait() == 0


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
