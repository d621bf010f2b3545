"""Seed 002, the JSON Stream Protocol: one test per normative "MUST"/"must" that no
other test names. In memory through `AgentSession` (tests/agent/_harness.py), and
through the real `flightdeck agent --json-stream` process where the clause is
about the wire (ready before anything else)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.agent import protocol as p
from tests.agent._harness import Harness, Step, types
from tests.agent._process import AgentProcess
from tests.fakes import FakeLLMServer, Turn


def _msg(msg_id: str, text: str = "hi") -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_protocol_1_1_ready_is_emitted_once_and_before_any_other_event(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """Spec 1.1: ready is 'Emitted once after initialization completes. Client MUST wait
    for this before sending messages.' Even a client that writes its message before
    reading anything sees ready first, exactly once, over two turns."""
    server.add(Turn(text="one"), Turn(text="two"))
    ws = tmp_path / "ws"
    ws.mkdir()
    with AgentProcess(
        "--provider",
        "anthropic",
        "--base-url",
        server.base_url,
        env={"ANTHROPIC_API_KEY": "test"},
        workspace=ws,
    ) as agent:
        agent.send(_msg("m1"))  # sent before ready was read: must not overtake it
        first = agent.until("stream_end")
        agent.send(_msg("m2"))
        second = agent.until("stream_end")
        agent.close_stdin()
        assert agent.wait() == 0
    seen = [e["type"] for e in first + second]
    assert seen[0] == "ready" and seen.count("ready") == 1
    assert seen[1] == "stream_start" and first[-1]["msg_id"] == "m1"
    assert second[-1]["msg_id"] == "m2"


def test_protocol_2_2_stop_must_cancel_the_in_flight_llm_request(tmp_path: Path) -> None:
    """Spec 2.2 stop, 'Agent MUST: 1. Cancel any in-flight LLM request'."""

    async def body() -> None:
        h = Harness(tmp_path, [Step(text="partial", hang=True)])
        await h.send(_msg("m1"))
        await h.until("text_delta")
        assert h.provider.cancelled == 0
        await h.send({"type": "stop"})
        await h.until("stream_end")
        assert h.provider.cancelled == 1
        assert len(h.provider.requests) == 1  # cancelled, not retried

    asyncio.run(body())


def test_protocol_2_2_stop_must_cancel_the_running_tool(tmp_path: Path) -> None:
    """Spec 2.2 stop, 'Agent MUST: 2. Cancel any running tool (if possible)': a running
    Bash call ends as tool_cancelled, and its process is gone."""

    async def body() -> None:
        script = "echo started > started.txt; sleep 60; echo done > done.txt"
        h = Harness(tmp_path, [Step(calls=[("t1", "Bash", {"command": script})])], mode="yolo")
        await h.send(_msg("m1"))
        await h.until("tool_running")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not (tmp_path / "started.txt").exists() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        cancelled = [e for e in events if isinstance(e, p.ToolCancelledEvent)]
        assert [(c.call_id, c.msg_id) for c in cancelled] == [("t1", "m1")]
        assert "tool_result" not in types(events)
        assert not (tmp_path / "done.txt").exists()

    asyncio.run(body())


def test_protocol_2_2_stop_must_emit_stream_end_for_the_current_msg_id(tmp_path: Path) -> None:
    """Spec 2.2 stop, 'Agent MUST: 3. Emit stream_end for the current msg_id' (the second
    turn's id, not the first's), and nothing of that turn follows it."""

    async def body() -> None:
        h = Harness(tmp_path, [Step(text="first"), Step(text="partial", hang=True)])
        await h.send(_msg("m1"))
        await h.until("stream_end")
        await h.send(_msg("m2"))
        await h.until("text_delta")
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        end = events[-1]
        assert isinstance(end, p.StreamEndEvent) and end.msg_id == "m2"
        assert h.drain() == []

    asyncio.run(body())


def test_protocol_2_3_tool_approve_call_id_must_match_a_pending_tool_request(
    tmp_path: Path,
) -> None:
    """Spec 2.3: tool_approve's call_id 'Must match a pending tool_request'. An unknown
    id is a protocol_error naming it; the real pending call stays paused and can still
    be approved."""

    async def body() -> None:
        args = {"file_path": "a.txt", "content": "x"}
        h = Harness(tmp_path, [Step(calls=[("t1", "Write", args)]), Step(text="ok")])
        await h.send(_msg("m1"))
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "nope", "scope": "once"})
        error = await h.next()
        assert isinstance(error, p.ErrorEvent) and error.error.code == "protocol_error"
        assert "nope" in error.error.message and not error.error.retryable
        assert h.drain() == [] and not (tmp_path / "a.txt").exists()
        await h.send({"type": "tool_approve", "call_id": "t1", "scope": "once"})
        rest = await h.until("stream_end")
        assert types(rest)[:2] == ["tool_running", "tool_result"]
        assert (tmp_path / "a.txt").read_text() == "x"

    asyncio.run(body())


def test_protocol_2_4_tool_deny_must_feed_the_reason_back_to_the_llm(tmp_path: Path) -> None:
    """Spec 2.4 tool_deny, 'Agent MUST: 1. Emit tool_cancelled 2. Feed the denial reason
    back to the LLM as tool result 3. Continue the conversation'."""

    async def body() -> None:
        args = {"command": "rm -rf build"}
        h = Harness(tmp_path, [Step(calls=[("t1", "Bash", args)]), Step(text="Understood.")])
        await h.send(_msg("m1"))
        await h.until("tool_request")
        await h.send({"type": "tool_deny", "call_id": "t1", "reason": "Not on my machine"})
        events = await h.until("stream_end")
        assert types(events)[0] == "tool_cancelled"
        cancelled = events[0]
        assert isinstance(cancelled, p.ToolCancelledEvent) and cancelled.call_id == "t1"
        assert "text_delta" in types(events)  # the conversation continued
        second = h.provider.requests[1]
        fed_back = repr(second.messages[-1])
        assert "Not on my machine" in fed_back and "t1" in fed_back

    asyncio.run(body())
