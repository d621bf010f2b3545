"""AionUi's flows for aionrs, replayed against the agent process and the
loopback fake providers (issue 13): spawn, message shapes, the stop sequence,
pings, set_config, attachments. Sessions, approvals and end of input are in
test_aionui_session.py."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_ext._aionui import content, errors, spawn, text_of, workspace
from tests.fakes import FakeLLMServer, Turn

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_current_client_spawn_and_content_message(server: FakeLLMServer, tmp_path: Path) -> None:
    """`content`, --base-url without /v1 (gets /v1 as aionrs did), cwd as workspace,
    and the .aionrs.toml compat setting AionUi writes for OpenAI."""
    compat = (
        '[providers.openai.compat]\nmax_tokens_field = "max_completion_tokens"\n'
        "merge_same_role = true\n"
    )
    ws = workspace(tmp_path, compat)
    server.add(Turn(text="Hello from the fake."))
    with spawn(server, ws, session=("--session-id", "conv-1")) as agent:
        ready = agent.next()
        assert ready["type"] == "ready" and ready["session_id"] == "conv-1"
        caps = ready["capabilities"]
        assert caps["effort"] is True and caps["effort_levels"] == ["low", "medium", "high"]
        assert caps["modes"] == ["default", "auto_edit", "yolo"]
        assert caps["current_mode"] == "default" and caps["image_input"] == "unknown"
        ignored = agent.next()
        assert ignored["type"] == "info" and "merge_same_role ignored" in ignored["message"]
        agent.send(content("m1", "hi"))
        events = agent.until("stream_end")
        assert not errors(events) and text_of(events) == "Hello from the fake."
    request = server.received[0]
    assert request.path.startswith("/v1/chat/completions")
    assert request.body["max_completion_tokens"] == 2000 and "max_tokens" not in request.body
    assert request.body["messages"][-1]["content"] in ("hi", [{"type": "text", "text": "hi"}])
    assert str(ws) in json.dumps(request.body["messages"][0])  # the workspace is the cwd


def test_earlier_client_input_shape_and_both_shapes(server: FakeLLMServer, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="one"), Turn(text="two"))
    with spawn(server, ws, provider="anthropic", model="claude-test") as agent:
        agent.next()
        agent.send({"type": "message", "msg_id": "m1", "input": "spec shape"})
        assert text_of(agent.until("stream_end")) == "one"
        agent.send({"type": "message", "msg_id": "m2", "input": "same", "content": "same"})
        assert text_of(agent.until("stream_end")) == "two"
        agent.send({"type": "message", "msg_id": "m3", "input": "a", "content": "b"})
        event = agent.next()
        assert event["error"]["code"] == "protocol_error" and event["msg_id"] == "m3"
        assert "differ" in event["error"]["message"]
        agent.send({"type": "message", "msg_id": "m4"})
        assert "missing field input" in agent.next()["error"]["message"]


def test_stop_sequence_with_init_history_and_pings(server: FakeLLMServer, tmp_path: Path) -> None:
    """Preset rules after ready, pings during the turn, init_history then stop:
    no error reaches the user, and the next turn has the context."""
    ws = workspace(tmp_path)
    server.add(Turn(text="x" * 40, delta_size=1, delta_delay=0.05), Turn(text="again"))
    with spawn(server, ws) as agent:
        agent.next()
        agent.send({"type": "init_history", "text": "[Assistant System Rules]\nBe kind."})
        agent.send(content("m1", "write a lot"))
        agent.until("text_delta")
        agent.send({"type": "ping"})
        agent.send({"type": "ping"})
        agent.send({"type": "init_history", "text": "user: write a lot"})
        agent.send({"type": "stop"})
        events = agent.until("stream_end")
        assert [e for e in events if e["type"] == "pong"] == [{"type": "pong"}] * 2
        assert not errors(events)
        agent.send(content("m2", "and now?"))
        events = agent.until("stream_end")
        assert not errors(events) and text_of(events) == "again"
    system = json.dumps(server.requests[-1]["messages"][0])
    assert "Be kind." in system and "user: write a lot" in system


def test_set_config_applies_from_the_next_turn(server: FakeLLMServer, tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="slow " * 8, delta_size=1, delta_delay=0.02), Turn(text="fast"))
    with spawn(server, ws) as agent:
        agent_ready = agent.next()
        agent.send(content("m1", "first"))
        agent.until("text_delta")
        agent.send({"type": "set_config", "model": "gpt-other", "effort": "high"})
        events = agent.until("config_changed")
        info = [e for e in events if e["type"] == "info"][-1]
        assert "next turn" in info["message"] and "gpt-other" in info["message"]
        changed = events[-1]
        assert changed["config"]["model"] == "gpt-other" and changed["config"]["effort"] == "high"
        assert changed["capabilities"]["effort_levels"] == ["low", "medium", "high"]
        assert changed["capabilities"]["sandbox"] == agent_ready["capabilities"]["sandbox"]
        agent.until("stream_end")
        agent.send(content("m2", "second"))
        agent.until("stream_end")
        agent.send({"type": "set_config", "effort": "extreme", "compaction": "off"})
        events = agent.until("config_changed")
        assert 'invalid level "extreme"' in events[0]["message"]
        assert events[-1]["config"]["effort"] == "high"
        assert events[-1]["config"]["compaction"] == "off"
        agent.send({"type": "set_mode", "mode": "auto_edit"})
        assert agent.next()["capabilities"]["current_mode"] == "auto_edit"
    first, second = server.requests
    assert first["model"] == "gpt-test" and "reasoning_effort" not in first
    assert second["model"] == "gpt-other" and second["reasoning_effort"] == "high"


def test_set_config_thinking_and_unsupported_effort_on_anthropic(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    server.add(Turn(text="ok"))
    with spawn(server, ws, provider="anthropic", model="claude-test") as agent:
        assert agent.next()["capabilities"]["effort"] is False
        agent.send({"type": "set_config", "thinking": "enabled", "thinking_budget": 2048})
        agent.send({"type": "set_config", "effort": "high", "thinking_budget": None})
        events = agent.until("config_changed")
        assert events[-1]["config"]["thinking"] == "enabled"
        assert events[-1]["capabilities"]["thinking"] is True
        events = agent.until("config_changed")
        assert "not supported" in events[0]["message"]
        agent.send(content("m1", "think"))
        agent.until("stream_end")
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_attachments_pdf_is_listed_by_path_image_is_sent(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = workspace(tmp_path)
    (ws / "report.pdf").write_bytes(b"%PDF-1.7\n\x00\x01\x02binary")
    (ws / "dot.png").write_bytes(PNG)
    server.add(Turn(text="seen"), Turn(text="seen again"))
    with spawn(server, ws, provider="anthropic", model="claude-test") as agent:
        agent.next()
        agent.send(content("m1", "look", files=["report.pdf", str(ws / "dot.png")]))
        events = agent.until("stream_end")
        assert not errors(events) and text_of(events) == "seen"
        agent.send({"type": "set_config", "image_input": "unsupported"})
        agent.until("config_changed")
        agent.send(content("m2", "again", files=["dot.png"]))
        agent.until("stream_end")
    blocks = server.requests[0]["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["image", "text", "text"]
    assert str(ws / "report.pdf") in blocks[1]["text"] and "%PDF" not in blocks[1]["text"]
    later = server.requests[1]["messages"][-1]["content"]
    assert all(b["type"] == "text" for b in later) and "dot.png" in later[0]["text"]
