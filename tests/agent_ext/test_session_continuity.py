"""Sessions keep their context (issue 13 item 6): a compaction is recorded in
the session and a resume continues from it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from flightdeck.agent import SessionStore
from flightdeck.agent import protocol as p
from flightdeck.agent.engine._compaction import CLEARED
from flightdeck.llm import TextBlock, ToolResultBlock
from tests.agent._harness import Harness, Step


def msg(msg_id: str, text: str) -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def results(history: list[Any]) -> list[str]:
    return [
        b.content[0].text
        for m in history
        for b in m.content
        if isinstance(b, ToolResultBlock) and isinstance(b.content[0], TextBlock)
    ]


def test_compaction_is_recorded_and_a_resume_continues_from_it(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i:03d} {'x' * 40}\n" for i in range(40)))
    store = SessionStore(tmp_path / "sessions")
    session = store.create("long")
    read = {"file_path": "big.txt"}

    async def first() -> None:
        steps = [Step(calls=[("r1", "Read", read)]), Step(text="ok")]
        steps += [Step(calls=[("r2", "Read", read)]), Step(text="ok again")]
        h = Harness(
            tmp_path, steps, session=session, mode="yolo", context_window=3000, max_tokens=1000
        )
        await h.send(msg("m1", "read it"))
        await h.until("stream_end")
        await h.send(msg("m2", "read it again"))
        events = await h.until("stream_end")
        assert any(isinstance(e, p.InfoEvent) and "cleared" in e.message for e in events)

    asyncio.run(first())
    loaded = store.open("long").load()
    assert results(loaded.history)[0] == CLEARED  # the resumed history is the compacted one
    assert results(loaded.history)[-1] != CLEARED

    async def resumed() -> None:
        h = Harness(
            tmp_path,
            [Step(text="continuing")],
            session=store.open("long"),
            loaded=loaded,
            mode="yolo",
            context_window=3000,
            max_tokens=1000,
        )
        await h.send(msg("m3", "go on"))
        events = await h.until("stream_end")
        assert not any(isinstance(e, p.InfoEvent) for e in events)  # no second compaction
        assert CLEARED in str(h.provider.requests[0].messages)

    asyncio.run(resumed())


def test_pending_approvals_are_sent_again_after_a_resume(tmp_path: Path) -> None:
    from tests.agent._process import AgentProcess
    from tests.fakes import FakeLLMServer, ToolCall, Turn

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\n")
    key = {"ANTHROPIC_API_KEY": "k"}
    with FakeLLMServer() as server:
        server.add(
            Turn(tool_calls=[ToolCall("Bash", {"command": "touch approved"}, id="call-1")]),
            Turn(text="made it"),
        )
        url = ("--base-url", server.base_url)
        with AgentProcess(*url, "--session-id", "s1", env=key, workspace=ws) as agent:
            agent.next()
            agent.send(msg("m1", "make a file"))
            first = agent.until("tool_request")[-1]
            agent.proc.kill()  # the host dies while the approval is awaited
            agent.wait()
        with AgentProcess(*url, "--resume", "s1", env=key, workspace=ws) as agent:
            assert agent.next()["type"] == "ready"
            events = agent.until("tool_request")
            assert events[0] == {"type": "stream_start", "msg_id": "m1"}
            again = events[-1]
            assert again["call_id"] == first["call_id"] == "call-1"
            assert again["tool"] == first["tool"]
            agent.send({"type": "tool_approve", "call_id": "call-1"})
            events = agent.until("stream_end")
            assert "".join(e.get("text", "") for e in events) == "made it"
            agent.close_stdin()
            assert agent.wait() == 0
    assert (ws / "approved").exists()
    assert len(server.requests) == 2  # the model was not asked again for the same reply
