"""The protocol through the real process against fake Anthropic and OpenAI
servers on loopback (spec sections 3 and 4, and issue 7's drifts)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.guard import bwrap_path
from tests.agent._process import AgentProcess
from tests.fakes import FakeLLMServer, ToolCall, Turn

KEY = {"ANTHROPIC_API_KEY": "test"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    # fast retries for the tests; everything else at its default
    (root / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\n")
    return root


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def anthropic(server: FakeLLMServer, ws: Path, *extra: str) -> AgentProcess:
    return AgentProcess(
        "--provider", "anthropic", "--base-url", server.base_url, *extra, env=KEY, workspace=ws
    )


def msg(msg_id: str, text: str = "hi") -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_spec_3_1_ready_first_then_3_2_message_turn(server: FakeLLMServer, ws: Path) -> None:
    server.add(Turn(text="Hi! How can I help?", usage={"input_tokens": 42, "output_tokens": 7}))
    flags = ("--model", "claude-test", "--max-tokens", "1000", "--system-prompt", "Be brief.")
    with anthropic(server, ws, *flags) as agent:
        ready = agent.next()
        assert ready["type"] == "ready" and ready["version"] == "0.1.0"
        assert ready["session_id"] and ready["capabilities"] == {
            "tool_approval": True,
            "thinking": False,
            "mcp": False,
            "sandbox": "bubblewrap" if bwrap_path() else "off",
            # aionrs's additions, always present (docs/protocol.md)
            "image_input": "unknown",
            "effort": False,
            "effort_levels": [],
            "modes": ["default", "auto_edit", "yolo"],
            "current_mode": "default",
        }
        agent.send(msg("m1", "Hello"))
        events = agent.until("stream_end")
        assert kinds(events)[0] == "stream_start" and set(kinds(events)[1:-1]) == {"text_delta"}
        assert "".join(e["text"] for e in events if e["type"] == "text_delta") == (
            "Hi! How can I help?"
        )
        assert events[-1] == {
            "type": "stream_end",
            "msg_id": "m1",
            "usage": {
                "input_tokens": 42,
                "output_tokens": 7,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
            },
        }
        body = server.requests[0]
        assert body["model"] == "claude-test" and body["max_tokens"] == 1000
        assert "Be brief." in json.dumps(body["system"])
        assert {t["name"] for t in body["tools"]} == {
            "Read",
            "Write",
            "Edit",
            "Bash",
            "Glob",
            "Grep",
            "Spawn",  # agent part 2 (src/flightdeck/agent/extensions/_spawn.py)
        }
        agent.close_stdin()
        assert agent.wait() == 0


def test_spec_3_3_tool_approval_flow_over_openai_wire(tmp_path: Path, ws: Path) -> None:
    turns = [
        Turn(
            text="I'll create the file.",
            tool_calls=[ToolCall("Write", {"file_path": "hello.rs", "content": "fn main() {}\n"})],
        ),
        Turn(text="File created successfully."),
    ]
    with (
        FakeLLMServer(turns) as server,
        AgentProcess(
            "--provider",
            "openai",
            "--model",
            "gpt-test",
            "--base-url",
            server.base_url + "/v1",
            env={"OPENAI_API_KEY": "test"},
            workspace=ws,
        ) as agent,
    ):
        assert agent.next()["type"] == "ready"
        agent.send(msg("m2", "Create a hello.rs file"))
        events = agent.until("tool_request")
        request = events[-1]
        assert request["tool"]["name"] == "Write" and request["tool"]["category"] == "edit"
        agent.send({"type": "tool_approve", "call_id": request["call_id"], "scope": "once"})
        rest = agent.until("stream_end")
        assert kinds(rest)[:2] == ["tool_running", "tool_result"]
        assert rest[1]["status"] == "success" and "text_delta" in kinds(rest)
        assert (ws / "hello.rs").read_text() == "fn main() {}\n"
        tool_msg = server.requests[1]["messages"][-1]
        assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == request["call_id"]


def test_spec_3_4_multi_tool_requests_first_then_any_order(server: FakeLLMServer, ws: Path) -> None:
    (ws / "a.txt").write_text("A")
    (ws / "b.txt").write_text("B")
    reads = [ToolCall("Read", {"file_path": "a.txt"}), ToolCall("Read", {"file_path": "b.txt"})]
    server.add(Turn(tool_calls=reads), Turn(text="both read"))
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send(msg("m1"))
        events = agent.until("tool_request")
        second = agent.next()
        assert kinds(events) == ["stream_start", "tool_request"]
        assert second["type"] == "tool_request"
        agent.send({"type": "tool_approve", "call_id": second["call_id"]})
        agent.send({"type": "tool_approve", "call_id": events[-1]["call_id"]})
        rest = agent.until("stream_end")
        results = {e["call_id"]: e["output"] for e in rest if e["type"] == "tool_result"}
        assert "A" in results[events[-1]["call_id"]] and "B" in results[second["call_id"]]
        fed = server.requests[1]["messages"][-1]["content"]
        assert [b["tool_use_id"] for b in fed] == [events[-1]["call_id"], second["call_id"]]


def test_drift_deny_and_scope_always_through_process(server: FakeLLMServer, ws: Path) -> None:
    server.add(
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo one"})]),
        Turn(text="denied, fine"),
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo two"})]),
        Turn(text="ran"),
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo three"})]),
        Turn(text="ran again"),
    )
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send(msg("m1"))
        call = agent.until("tool_request")[-1]["call_id"]
        agent.send({"type": "tool_deny", "call_id": call, "reason": "No shell today"})
        first = agent.until("stream_end")
        assert first[0] == {
            "type": "tool_cancelled",
            "msg_id": "m1",
            "call_id": call,
            "reason": "No shell today",
        }
        fed = server.requests[1]["messages"][-1]["content"][0]
        assert fed["is_error"] and "No shell today" in json.dumps(fed["content"])
        agent.send(msg("m2"))
        call = agent.until("tool_request")[-1]["call_id"]
        agent.send({"type": "tool_approve", "call_id": call, "scope": "always"})
        agent.until("stream_end")
        agent.send(msg("m3"))
        third = agent.until("stream_end")
        assert "tool_request" not in kinds(third) and "tool_running" in kinds(third)


def test_drift_stop_emits_stream_end_and_process_stays(server: FakeLLMServer, ws: Path) -> None:
    server.add(Turn(text="x" * 400, delta_size=1, delta_delay=0.05), Turn(text="next"))
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send(msg("m1"))
        agent.until("text_delta")
        agent.send({"type": "stop"})
        events = agent.until("stream_end")
        assert events[-1]["msg_id"] == "m1"
        agent.send(msg("m2"))
        again = agent.until("stream_end")
        assert again[0] == {"type": "stream_start", "msg_id": "m2"}
        assert "".join(e["text"] for e in again if e["type"] == "text_delta") == "next"
        agent.close_stdin()
        assert agent.wait() == 0


def test_drift_malformed_input_is_protocol_error_and_nothing_is_lost(
    server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(text="fine"))
    with anthropic(server, ws) as agent:
        agent.next()
        bad = [
            ("{oops", None),  # spec 4.1: malformed JSON or unknown type -> "msg_id": null
            ('{"type":"explode"}', None),
            ('{"type":"message","msg_id":"m0"}', "m0"),  # the id it did carry
            ("[]", None),
        ]
        for line, msg_id in bad:
            agent.send(line)
            error = agent.next()
            assert error["type"] == "error" and error["error"]["code"] == "protocol_error"
            assert error["error"]["retryable"] is False
            assert "msg_id" in error and error["msg_id"] == msg_id
        agent.send({"type": "tool_approve", "call_id": "ghost"})
        assert "ghost" in agent.next()["error"]["message"]
        agent.send(msg("m1"))
        assert kinds(agent.until("stream_end"))[-2] == "text_delta"


def test_spec_4_2_retries_announced_then_success(server: FakeLLMServer, ws: Path) -> None:
    server.add(Turn(error=429), Turn(text="partial text here", cut_after=4), Turn(text="ok"))
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send(msg("m1"))
        events = agent.until("stream_end")
        infos = [e["message"] for e in events if e["type"] == "info"]
        assert len(infos) == 2 and infos[0].endswith("(1/2)") and infos[1].endswith("(2/2)")
        assert "Stream interrupted, retrying... (2/2)" in infos
        assert "error" not in kinds(events)
        assert len(server.requests) == 3


def test_spec_4_2_final_failure_is_an_error_and_conversation_continues(
    server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(error=500), Turn(error=500), Turn(error=500), Turn(text="back"))
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send(msg("m1"))
        events = agent.until("stream_end")
        error = next(e for e in events if e["type"] == "error")
        assert error["msg_id"] == "m1" and error["error"]["code"] == "provider_error"
        assert error["error"]["retryable"] is True
        agent.send(msg("m2"))
        assert "text_delta" in kinds(agent.until("stream_end"))


def test_auth_failure_is_not_retryable(ws: Path) -> None:
    with (
        FakeLLMServer([Turn(text="never")], api_key="right") as server,
        anthropic(server, ws) as agent,
    ):
        agent.next()
        agent.send(msg("m1"))
        events = agent.until("stream_end")
        error = next(e for e in events if e["type"] == "error")
        assert error["error"] == {
            "code": "provider_error",
            "message": error["error"]["message"],
            "retryable": False,
        }
        assert "info" not in kinds(events)  # not retried


def test_spec_4_3_missing_key_is_config_error_and_nonzero_exit(ws: Path) -> None:
    with AgentProcess("--provider", "anthropic", workspace=ws) as agent:
        event = agent.next()
        assert event["type"] == "error" and event["msg_id"] is None
        assert event["error"]["code"] == "config_error" and not event["error"]["retryable"]
        assert "ANTHROPIC_API_KEY" in event["error"]["message"]
        assert agent.wait() != 0
        assert len(agent.raw) == 1


def test_unknown_provider_in_config_is_config_error(ws: Path) -> None:
    (ws / "flightdeck.toml").write_text('[agent]\nprovider = "nope"\n')
    with AgentProcess(env=KEY, workspace=ws) as agent:
        event = agent.next()
        assert event["error"]["code"] == "config_error" and "nope" in event["error"]["message"]
        assert agent.wait() == 1


def test_session_flags_are_exclusive_and_session_id_must_be_new(
    server: FakeLLMServer, ws: Path
) -> None:
    with anthropic(server, ws, "--session-id", "mine") as agent:
        assert agent.next()["session_id"] == "mine"
        agent.close_stdin()
        assert agent.wait() == 0
    with anthropic(server, ws, "--session-id", "mine") as agent:
        event = agent.next()
        assert event["error"]["code"] == "config_error" and "exists" in event["error"]["message"]
        assert agent.wait() == 1
    with anthropic(server, ws, "--session-id", "x", "--resume", "mine") as agent:
        assert agent.next()["error"]["code"] == "config_error"
        assert agent.wait() == 1
    # an unknown id starts that id fresh with an info (AionUi's fallback, issue 13)
    with anthropic(server, ws, "--resume", "missing") as agent:
        ready = agent.next()
        assert ready["type"] == "ready" and ready["session_id"] == "missing"
        info = agent.next()
        assert info["type"] == "info" and "not found" in info["message"]
        assert "new session" in info["message"]
        agent.close_stdin()
        assert agent.wait() == 0


def test_resume_after_kill_9_mid_turn(server: FakeLLMServer, ws: Path) -> None:
    server.add(
        Turn(text="The answer is 42."),
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo hi"})]),
    )
    with anthropic(server, ws, "--session-id", "crash") as agent:
        agent.next()
        agent.send(msg("m1", "What is the answer?"))
        agent.until("stream_end")
        agent.send(msg("m2", "Now run something"))
        agent.until("tool_request")
        agent.signal(signal.SIGKILL)
        agent.wait()
    server.add(Turn(text="denied then"), Turn(text="resumed"))
    with anthropic(server, ws, "--resume", "latest") as agent:
        assert agent.next()["session_id"] == "crash"
        # the approval awaited when the process died is asked again (issue 13)
        asked = agent.until("tool_request")
        assert asked[0] == {"type": "stream_start", "msg_id": "m2"}
        agent.send({"type": "tool_deny", "call_id": asked[-1]["call_id"]})
        agent.until("stream_end")
        agent.send(msg("m3", "Continue"))
        agent.until("stream_end")
    sent = server.requests[-1]["messages"]
    flat = json.dumps(sent)
    assert "What is the answer?" in flat and "The answer is 42." in flat
    assert "Now run something" in flat and "Continue" in flat
    assert [m["role"] for m in sent] == ["user", "assistant"] * 3 + ["user"]


def test_sigterm_mid_turn_saves_and_exits_zero(server: FakeLLMServer, ws: Path) -> None:
    server.add(Turn(text="y" * 300, delta_size=1, delta_delay=0.05))
    with anthropic(server, ws, "--session-id", "term") as agent:
        agent.next()
        agent.send(msg("m1", "long answer please"))
        agent.until("text_delta")
        agent.signal(signal.SIGTERM)
        events = agent.until("stream_end")
        assert events[-1]["msg_id"] == "m1"
        assert agent.wait() == 0
    from flightdeck.agent import SessionStore
    from flightdeck.agent._app import sessions_root

    history = SessionStore(sessions_root()).open("term").load().history
    assert history[0].role == "user" and history[-1].role == "assistant"


def test_drift_init_history_is_context_through_process(server: FakeLLMServer, ws: Path) -> None:
    server.add(Turn(text="ok"))
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send({"type": "init_history", "text": "Previous summary: user likes tea."})
        agent.send(msg("m1"))
        agent.until("stream_end")
        # after a message: context for the next turn, no error (issue 13)
        agent.send({"type": "init_history", "text": "later: user likes milk"})
        agent.send({"type": "ping"})
        assert agent.next() == {"type": "pong"}
    assert "user likes tea" in json.dumps(server.requests[0]["system"])


def test_thinking_and_edit_diff_and_auto_approve(server: FakeLLMServer, ws: Path) -> None:
    (ws / "flightdeck.toml").write_text("[agent]\nthinking_budget = 2048\nretry_delay = 0.01\n")
    (ws / "main.py").write_text("print('old')\n")
    server.add(
        Turn(thinking="Let me look.", tool_calls=[ToolCall("Read", {"file_path": "main.py"})]),
        Turn(
            tool_calls=[
                ToolCall("Edit", {"file_path": "main.py", "old_string": "old", "new_string": "new"})
            ]
        ),
        Turn(text="Edited."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        assert agent.next()["capabilities"]["thinking"] is True
        agent.send(msg("m1"))
        events = agent.until("stream_end")
        assert "tool_request" not in kinds(events)
        thinking = [e for e in events if e["type"] == "thinking"]
        assert "".join(e["text"] for e in thinking) == "Let me look."
        assert all(e["msg_id"] == "m1" for e in thinking)
        edit = [e for e in events if e["type"] == "tool_result"][1]
        assert edit["output_type"] == "diff" and edit["metadata"]["file_path"] == str(
            ws / "main.py"
        )
        assert "-print('old')\n+print('new')" in edit["output"]
    assert server.requests[0]["thinking"]["budget_tokens"] == 2048


def test_max_turns_through_process(server: FakeLLMServer, ws: Path) -> None:
    server.add(*[Turn(tool_calls=[ToolCall("Glob", {"pattern": "*"})]) for _ in range(4)])
    with anthropic(server, ws, "--max-turns", "2", "--auto-approve") as agent:
        agent.next()
        agent.send(msg("m1"))
        events = agent.until("stream_end")
        assert kinds(events)[-2] == "info" and "2 turns" in events[-2]["message"]
        assert len(server.requests) == 2


def test_unknown_provider_flag_is_config_error_event(ws: Path) -> None:
    with AgentProcess("--provider", "acme", env=KEY, workspace=ws) as agent:
        event = agent.next()
        assert event["error"]["code"] == "config_error" and "acme" in event["error"]["message"]
        assert agent.wait() == 1


def test_sessions_disabled_ready_has_no_session_id(server: FakeLLMServer, ws: Path) -> None:
    (ws / "flightdeck.toml").write_text("[agent]\nsessions = false\n")
    with anthropic(server, ws) as agent:
        ready = agent.next()
        assert ready["type"] == "ready" and "session_id" not in ready


def test_torn_session_record_is_reported_after_ready(server: FakeLLMServer, ws: Path) -> None:
    server.add(Turn(text="first"), Turn(text="second"))
    with anthropic(server, ws, "--session-id", "torn") as agent:
        agent.next()
        agent.send(msg("m1", "remember me"))
        agent.until("stream_end")
        agent.close_stdin()
        agent.wait()
    from flightdeck.agent._app import sessions_root

    with open(sessions_root() / "torn" / "messages.jsonl", "ab") as handle:
        handle.write(b'{"kind":"messages","messages":[{"ro')
    with anthropic(server, ws, "--resume", "torn") as agent:
        assert agent.next()["type"] == "ready"
        info = agent.next()
        assert info["type"] == "info" and "torn" in info["message"]
        agent.send(msg("m2"))
        agent.until("stream_end")
    assert "remember me" in json.dumps(server.requests[-1]["messages"])


def test_terminal_mode_chats_and_asks_for_approval(server: FakeLLMServer, ws: Path) -> None:
    """Without --json-stream: a chat for a person, approval asked as y/n/always."""
    import os
    import subprocess

    from tests.agent._process import FLIGHTDECK

    server.add(
        Turn(text="Hello **human**"),
        Turn(tool_calls=[ToolCall("Write", {"file_path": "t.txt", "content": "x"})]),
        Turn(text="Written."),
    )
    done = subprocess.run(
        [FLIGHTDECK, "agent", "--base-url", server.base_url, "--workspace", str(ws)],
        input="hi\nwrite it\ny\n/exit\n",
        capture_output=True,
        text=True,
        env={**os.environ, **KEY, "COLUMNS": "100"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello" in done.stdout and "human" in done.stdout
    assert "Write" in done.stdout and "allow?" in done.stdout and "Written." in done.stdout
    assert (ws / "t.txt").read_text() == "x"


def test_spec_3_5_eof_mid_turn_finishes_the_turn_saves_and_exits_zero(
    server: FakeLLMServer, ws: Path
) -> None:
    """End of input lets the running turn finish (issue 13: a piped message
    prints its answer), then the process exits 0."""
    server.add(Turn(text="z" * 300, delta_size=1, delta_delay=0.01))
    with anthropic(server, ws, "--session-id", "eof") as agent:
        agent.next()
        agent.send(msg("m1", "tell me a long story"))
        events = agent.until("text_delta")
        agent.close_stdin()
        events += agent.until("stream_end")
        assert events[-1]["msg_id"] == "m1"
        assert "".join(e.get("text", "") for e in events) == "z" * 300  # not cancelled
        assert agent.wait() == 0
    from flightdeck.agent import SessionStore
    from flightdeck.agent._app import sessions_root

    history = SessionStore(sessions_root()).open("eof").load().history
    assert [m.role for m in history] == ["user", "assistant"]


def test_drift_usage_per_turn_through_process(server: FakeLLMServer, ws: Path) -> None:
    usage1 = {
        "input_tokens": 100,
        "output_tokens": 10,
        "cache_read_tokens": 80,
        "cache_write_tokens": 20,
    }
    usage2 = {
        "input_tokens": 5,
        "output_tokens": 1,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    server.add(Turn(text="one", usage=usage1), Turn(text="two", usage=usage2))
    with anthropic(server, ws) as agent:
        agent.next()
        agent.send(msg("m1"))
        assert agent.until("stream_end")[-1]["usage"] == usage1
        agent.send(msg("m2"))
        assert agent.until("stream_end")[-1]["usage"] == usage2
