"""Compaction through the real process on a long scripted conversation with a
small configured window (`[agent] context_window`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_ext._common import anthropic, make_ws, msg, of_type
from tests.fakes import FakeLLMServer, ToolCall, Turn

CLEARED = "[older tool result cleared to save context]"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_long_conversation_clears_then_summarises_then_overflows(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ws = make_ws(tmp_path / "ws", "context_window = 4000\n")
    (ws / "big.txt").write_text("".join(f"row {i:03d} " + "y" * 45 + "\n" for i in range(60)))
    read = {"file_path": "big.txt"}
    server.add(
        Turn(tool_calls=[ToolCall("Read", read, id="r1")]),
        Turn(text="Read it."),
        Turn(tool_calls=[ToolCall("Read", read, id="r2")]),
        Turn(text="Read it again."),
        Turn(text="SUMMARY-ONE: the user had big.txt read twice."),  # summariser
        Turn(text="Noted the long text."),
        Turn(text="SUMMARY-TWO: more of the same."),  # summariser before the overflow
    )
    with anthropic(server, ws, "--max-tokens", "1000", "--auto-approve") as agent:
        assert agent.next()["type"] == "ready"
        agent.send(msg("m1", "read big.txt"))
        assert not of_type(agent.until("stream_end"), "info")

        agent.send(msg("m2", "read big.txt again"))
        infos = of_type(agent.until("stream_end"), "info")
        assert len(infos) == 1 and "cleared 1 older tool result" in infos[0]["message"]

        agent.send(msg("m3", "q" * 3200))
        events = agent.until("stream_end")
        infos = of_type(events, "info")
        assert len(infos) == 1 and "summarised" in infos[0]["message"]
        text = "".join(e["text"] for e in of_type(events, "text_delta"))
        assert text == "Noted the long text."

        agent.send(msg("m4", "w" * 14_000))
        events = agent.until("stream_end")
        errors = of_type(events, "error")
        assert [e["error"]["code"] for e in errors] == ["context_overflow"]
        assert errors[0]["msg_id"] == "m4" and errors[0]["error"]["retryable"] is False
        assert not of_type(events, "text_delta")
    bodies = server.requests
    assert len(bodies) == 7  # the overflowing turn never reached the model
    assert (
        CLEARED in str(bodies[3]["messages"]) and str(bodies[3]["messages"]).count("row 059") == 1
    )
    assert not bodies[4].get("tools")  # the summariser gets no tools
    assert "qqqq" not in str(bodies[4]["messages"]) and "row 000" in str(bodies[4]["messages"])
    assert "SUMMARY-ONE" in str(bodies[5]["messages"][0]) and "qqqq" in str(bodies[5]["messages"])
