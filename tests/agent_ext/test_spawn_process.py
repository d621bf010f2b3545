"""Spawn through the real process: a sub-agent's write needs approval in
default mode, visible to the client with the sub-agent named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_ext._common import anthropic, make_ws, msg, of_type, tool_results_sent
from tests.fakes import FakeLLMServer, ToolCall, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_spawn_subagent_write_needs_approval_in_default_mode(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = make_ws(tmp_path / "ws")
    task = {"name": "scribe", "prompt": "Create notes.md saying hello"}
    write = {"file_path": "notes.md", "content": "hello\n"}
    server.add(
        Turn(tool_calls=[ToolCall("Spawn", {"tasks": [task]}, id="sp1")]),  # parent
        Turn(tool_calls=[ToolCall("Write", write, id="wr1")]),  # sub-agent
        Turn(text="Created notes.md."),  # sub-agent's answer
        Turn(text="The scribe created notes.md."),  # parent
    )
    with anthropic(server, ws) as agent:
        assert agent.next()["type"] == "ready"
        agent.send(msg("m1", "delegate"))
        spawn = agent.until("tool_request")[-1]
        assert spawn["tool"]["name"] == "Spawn" and spawn["tool"]["category"] == "exec"
        agent.send({"type": "tool_approve", "call_id": "sp1"})
        sub = agent.until("tool_request")[-1]
        assert sub["msg_id"] == "m1" and sub["call_id"] == "scribe/wr1"
        assert sub["tool"]["name"] == "Write" and sub["tool"]["category"] == "edit"
        assert sub["tool"]["description"].startswith("[sub-agent scribe] ")
        assert not (ws / "notes.md").exists()
        agent.send({"type": "tool_approve", "call_id": "scribe/wr1"})
        events = agent.until("stream_end")
        results = of_type(events, "tool_result")
        assert [r["call_id"] for r in results] == ["scribe/wr1", "sp1"]
        assert results[1]["output"] == "## scribe\nCreated notes.md."
        text = "".join(e["text"] for e in of_type(events, "text_delta"))
        assert text == "The scribe created notes.md."
    assert (ws / "notes.md").read_text() == "hello\n"
    bodies = server.requests
    assert "named scribe" in str(bodies[1]["system"])
    assert "Spawn" not in {t["name"] for t in bodies[1]["tools"]}
    assert tool_results_sent(bodies[2])[0]["tool_use_id"] == "wr1"
    assert tool_results_sent(bodies[3])[0]["content"][0]["text"] == "## scribe\nCreated notes.md."
