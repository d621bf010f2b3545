"""Workspace manifest tools through the real process: approval follows the
merged action view, every call is audited."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.audit import list_records
from tests.agent_ext._common import anthropic, make_ws, msg, of_type, tool_results_sent
from tests.agent_ext._manifest_ws import manifest_workspace
from tests.fakes import FakeLLMServer, ToolCall, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_manifest_tool_action_approval_always_asks_even_in_yolo(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """`approval: always` on the action: a tool_request under --auto-approve,
    every time (scope always does not waive it); an `auto`, risk-0 action's
    tool runs straight away with category info; calls are audited."""
    ws = manifest_workspace(make_ws(tmp_path / "ws"))
    server.add(
        Turn(
            tool_calls=[
                ToolCall("notes_append", {"line": "first"}, id="n1"),
                ToolCall("text_count", {"text": "one two three"}, id="c1"),
            ]
        ),
        Turn(text="Appended and counted."),
        Turn(tool_calls=[ToolCall("notes_append", {"line": "second"}, id="n2")]),
        Turn(text="Appended again."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        ready = agent.next()
        sources = ready["capabilities"]["tools"]
        assert (
            sources["notes_append"].startswith("manifest:")
            and "notes-sdk" in sources["notes_append"]
        )
        assert ready["capabilities"]["mcp"] is False
        agent.send(msg("m1", "note and count"))
        events = agent.until("tool_request")
        request = events[-1]
        assert request["call_id"] == "n1" and request["tool"]["name"] == "notes_append"
        assert request["tool"]["category"] == "edit"
        assert "approval always" in request["tool"]["description"]
        agent.send({"type": "tool_approve", "call_id": "n1", "scope": "always"})
        events += agent.until("stream_end")
        assert [e["call_id"] for e in of_type(events, "tool_request")] == ["n1"]
        results = {e["call_id"]: e for e in of_type(events, "tool_result")}
        assert results["c1"]["status"] == "success" and '"words": 3' in results["c1"]["output"]
        assert (
            results["n1"]["status"] == "success"
            and '"appended": "first"' in results["n1"]["output"]
        )

        agent.send(msg("m2", "again"))
        request = agent.until("tool_request")[-1]
        assert request["call_id"] == "n2"
        agent.send({"type": "tool_deny", "call_id": "n2", "reason": "enough notes"})
        events = agent.until("stream_end")
        assert of_type(events, "tool_cancelled")[0]["reason"] == "enough notes"
    tools = {t["name"]: t for t in server.requests[0]["tools"]}
    assert tools["notes_append"]["input_schema"]["required"] == ["line"]
    assert tools["text_count"]["description"] == "Count the words of a text."
    sent = {b["tool_use_id"]: b for b in tool_results_sent(server.requests[1])}
    assert '"lines": 1' in sent["n1"]["content"][0]["text"]
    calls = list_records(kind="agent.tool_call")
    assert sorted((r.fields["tool"], r.fields["ok"]) for r in calls) == [
        ("notes.append", True),
        ("text.count", True),
    ]
    assert all(r.run_id == ready["session_id"] for r in calls)
    assert {r.fields["tool"] for r in list_records(kind="driver.call")} == {
        "notes.append",
        "text.count",
    }
