"""MCP servers' tools through the real `flightdeck agent --json-stream`
process: a real SDK-built MCP server over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_ext._common import (
    NOTES_SERVER,
    anthropic,
    kinds,
    make_ws,
    msg,
    of_type,
    stdio_server_toml,
    tool_results_sent,
)
from tests.fakes import FakeLLMServer, ToolCall, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def http_mcp(tmp_path: Path) -> Iterator[str]:
    """The notes server over streamable HTTP on 127.0.0.1, random port."""
    cwd = tmp_path / "http-cwd"
    cwd.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(NOTES_SERVER), "--http"], stdout=subprocess.PIPE, cwd=cwd
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_mcp_stdio_tool_approved_then_denied(server: FakeLLMServer, tmp_path: Path) -> None:
    """An MCP tool reaches the model as mcp__<server>__<tool> with its schema,
    category mcp; an approved call runs on the server, a denied one does not;
    a failing server is an info and shown in ready.capabilities, not fatal."""
    broken = '[mcp.servers.ghost]\ncommand = "/nonexistent/mcp-server"\n'
    ws = make_ws(tmp_path / "ws", stdio_server_toml() + broken)
    server.add(
        Turn(tool_calls=[ToolCall("mcp__notes__remember", {"text": "first"}, id="c1")]),
        Turn(text="Noted."),
        Turn(tool_calls=[ToolCall("mcp__notes__remember", {"text": "second"}, id="c2")]),
        Turn(text="Fine."),
    )
    with anthropic(server, ws) as agent:
        ready = agent.next()
        caps = ready["capabilities"]
        assert ready["type"] == "ready" and caps["mcp"] is True
        notes = caps["mcp_servers"]["notes"]
        assert notes["connected"] and notes["transport"] == "stdio"
        assert "mcp__notes__remember" in notes["tools"]
        ghost = caps["mcp_servers"]["ghost"]
        assert ghost["connected"] is False and ghost["error"]
        assert caps["tools"]["mcp__notes__remember"].startswith("mcp:notes")
        info = agent.next()
        assert info["type"] == "info" and "ghost" in info["message"]

        agent.send(msg("m1", "remember first"))
        events = agent.until("tool_request")
        request = events[-1]
        assert request["tool"]["name"] == "mcp__notes__remember"
        assert request["tool"]["category"] == "mcp"
        assert request["tool"]["args"] == {"text": "first"}
        agent.send({"type": "tool_approve", "call_id": "c1", "scope": "once"})
        events = agent.until("stream_end")
        assert kinds(events)[:2] == ["tool_running", "tool_result"]
        result = of_type(events, "tool_result")[0]
        assert result["status"] == "success" and result["output"] == "remembered: first"
        assert (ws / "notes.txt").read_text() == "first\n"

        agent.send(msg("m2", "remember second"))
        agent.until("tool_request")
        agent.send({"type": "tool_deny", "call_id": "c2", "reason": "no more notes"})
        events = agent.until("stream_end")
        assert of_type(events, "tool_cancelled")[0]["reason"] == "no more notes"
        assert not of_type(events, "tool_running")
        assert (ws / "notes.txt").read_text() == "first\n"
    bodies = server.requests
    tools = {t["name"]: t for t in bodies[0]["tools"]}
    assert tools["mcp__notes__remember"]["input_schema"]["required"] == ["text"]
    assert tool_results_sent(bodies[1])[0]["content"][0]["text"] == "remembered: first"
    denied = tool_results_sent(bodies[3])[0]
    assert denied["is_error"] and "no more notes" in denied["content"][0]["text"]


def test_mcp_streamable_http_results_map_to_tool_result(
    server: FakeLLMServer, tmp_path: Path, http_mcp: str
) -> None:
    """Over streamable HTTP, in yolo mode: text, image and error results map to
    tool_result (status, output_type image with base64 output)."""
    ws = make_ws(tmp_path / "ws", f'[mcp.servers.web]\nurl = "{http_mcp}"\n')
    server.add(
        Turn(
            tool_calls=[
                ToolCall("mcp__web__add", {"a": 2, "b": 40}, id="a1"),
                ToolCall("mcp__web__pixel", {}, id="a2"),
                ToolCall("mcp__web__fail", {"reason": "broken on purpose"}, id="a3"),
            ]
        ),
        Turn(text="done"),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        ready = agent.next()
        assert ready["capabilities"]["mcp_servers"]["web"]["transport"] == "http"
        agent.send(msg("m1", "go"))
        events = agent.until("stream_end")
        assert not of_type(events, "tool_request")
        results = {e["call_id"]: e for e in of_type(events, "tool_result")}
        assert results["a1"]["status"] == "success" and results["a1"]["output"] == "42"
        assert results["a2"]["output_type"] == "image" and results["a2"]["output"].startswith(
            "iVBOR"
        )
        assert results["a3"]["status"] == "error"
        assert "broken on purpose" in results["a3"]["output"]


def test_stop_cancels_a_running_mcp_call_and_eof_closes_the_session(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = make_ws(tmp_path / "ws", stdio_server_toml())
    server.add(
        Turn(tool_calls=[ToolCall("mcp__notes__slow", {"seconds": 60}, id="s1")]),
        Turn(tool_calls=[ToolCall("mcp__notes__add", {"a": 1, "b": 1}, id="a1")]),
        Turn(text="two"),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        assert agent.next()["type"] == "ready"
        agent.send(msg("m1", "wait"))
        agent.until("tool_running")
        agent.send({"type": "stop"})
        events = agent.until("stream_end")
        assert of_type(events, "tool_cancelled")[0]["call_id"] == "s1"
        agent.send(msg("m2", "add"))
        events = agent.until("stream_end")
        assert of_type(events, "tool_result")[0]["output"] == "2"
        pid = int((ws / "notes-server.pid").read_text())
        os.kill(pid, 0)  # the stdio server is running
        agent.close_stdin()
        assert agent.wait() == 0
    with pytest.raises(ProcessLookupError):  # and was stopped when the agent left
        os.kill(pid, 0)
