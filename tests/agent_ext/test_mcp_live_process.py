"""What an MCP server starts during a session, through the real
`flightdeck agent --json-stream` process and a real SDK-built server over
stdio: a changed tool list, progress of a call, elicitation."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.audit import list_records
from tests.agent_ext._common import SERVERS, anthropic, make_ws, msg, of_type
from tests.fakes import FakeLLMServer, ToolCall, Turn

LIVE_SERVER = SERVERS / "live_server.py"


def live_toml() -> str:
    return f"[mcp.servers.live]\ncommand = {sys.executable!r}\nargs = [{str(LIVE_SERVER)!r}]\n"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def offered(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body["tools"] if t["name"].startswith("mcp__")}


def test_a_changed_tool_list_replaces_the_servers_tools_and_progress_is_shown(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """After `unlock` the server lists `vault` instead: the agent lists again,
    the next request offers the new tools, and a call of the removed one is a
    clean error result. A call's progress is `tool_progress`."""
    ws = make_ws(tmp_path / "ws", live_toml())
    server.add(
        Turn(
            tool_calls=[
                ToolCall("mcp__live__count", {"steps": 3}, id="c1"),
                ToolCall("mcp__live__unlock", {}, id="u1"),
            ]
        ),
        Turn(text="Unlocked."),
        Turn(
            tool_calls=[
                ToolCall("mcp__live__unlock", {}, id="u2"),
                ToolCall("mcp__live__vault", {}, id="v1"),
            ]
        ),
        Turn(text="Opened."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        ready = agent.next()
        assert "mcp__live__unlock" in ready["capabilities"]["mcp_servers"]["live"]["tools"]
        agent.send(msg("m1", "unlock"))
        events = agent.until("stream_end")
        results = {e["call_id"]: e for e in of_type(events, "tool_result")}
        assert results["u1"]["output"] == "unlocked"
        assert results["c1"]["output"] == "counted to 3"
        of_c1 = [e["type"] for e in events if e.get("call_id") == "c1"]
        assert of_c1 == ["tool_running", *["tool_progress"] * 3, "tool_result"]
        progress = of_type(events, "tool_progress")
        assert [(e["progress"], e["total"], e["message"]) for e in progress] == [
            (1, 3, "step 1"),
            (2, 3, "step 2"),
            (3, 3, "step 3"),
        ]
        assert {(e["msg_id"], e["tool_name"]) for e in progress} == {("m1", "mcp__live__count")}
        while not any("tools changed" in e.get("message", "") for e in of_type(events, "info")):
            events.append(agent.next())
        changed = next(e for e in of_type(events, "info") if "tools changed" in e["message"])
        assert "mcp__live__vault" in changed["message"]
        assert "mcp__live__unlock" not in changed["message"]

        agent.send(msg("m2", "open"))
        events = agent.until("stream_end")
        results = {e["call_id"]: e for e in of_type(events, "tool_result")}
        assert results["u2"]["status"] == "error"
        assert results["u2"]["output"] == "Unknown tool: mcp__live__unlock"
        assert results["v1"]["status"] == "success" and results["v1"]["output"] == "vault opened"
    before, after = offered(server.requests[0]), offered(server.requests[2])
    assert "mcp__live__unlock" in before and "mcp__live__vault" not in before
    assert "mcp__live__vault" in after and "mcp__live__unlock" not in after


def test_the_request_carrying_the_result_offers_the_changed_list(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """The server says its tools changed during `unlock`: the very request
    that carries `unlock`'s result offers `vault` and no longer `unlock`
    (the re-listing is awaited before that request is built)."""
    ws = make_ws(tmp_path / "ws", live_toml())
    server.add(
        Turn(tool_calls=[ToolCall("mcp__live__unlock", {}, id="u1")]),
        Turn(tool_calls=[ToolCall("mcp__live__vault", {}, id="v1")]),
        Turn(text="Opened."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        agent.next()  # ready
        agent.send(msg("m1", "unlock and open"))
        events = agent.until("stream_end")
    results = {e["call_id"]: e for e in of_type(events, "tool_result")}
    assert results["u1"]["output"] == "unlocked"
    assert results["v1"]["status"] == "success", results["v1"]
    assert results["v1"]["output"] == "vault opened"
    carrying = server.requests[1]
    assert carrying["messages"][-1]["content"][0]["tool_use_id"] == "u1"
    assert "mcp__live__vault" in offered(carrying)
    assert "mcp__live__unlock" not in offered(carrying)


def test_an_elicitation_is_asked_as_a_tool_request(server: FakeLLMServer, tmp_path: Path) -> None:
    """Approved with content: the server gets `accept` and the values;
    denied: `decline`; both audited. `scope: "always"` on an elicitation
    approves nothing else (not a server tool of the same name)."""
    ws = make_ws(tmp_path / "ws", live_toml())
    server.add(
        Turn(tool_calls=[ToolCall("mcp__live__confirm", {"question": "Ship it?"}, id="q1")]),
        Turn(text="Asked."),
        Turn(tool_calls=[ToolCall("mcp__live__elicitation", {}, id="e1")]),
        Turn(text="Not run."),
        Turn(tool_calls=[ToolCall("mcp__live__confirm", {"question": "Again?"}, id="q2")]),
        Turn(text="Asked again."),
    )
    with anthropic(server, ws) as agent:
        ready = agent.next()
        agent.send(msg("m1", "ask"))
        assert agent.until("tool_request")[-1]["call_id"] == "q1"
        agent.send({"type": "tool_approve", "call_id": "q1"})
        request = agent.until("tool_request")[-1]
        assert request["msg_id"] == "m1" and request["call_id"] != "q1"
        assert request["tool"]["name"] == "mcp__live__elicitation"
        assert request["tool"]["category"] == "mcp"
        assert request["tool"]["args"]["message"] == "Ship it?"
        assert request["tool"]["args"]["requested_schema"]["properties"]["ok"]["type"] == "boolean"
        assert "Ship it?" in request["tool"]["description"]
        agent.send(
            {
                "type": "tool_approve",
                "call_id": request["call_id"],
                "scope": "always",
                "content": {"ok": True},
            }
        )
        events = agent.until("stream_end")
        assert of_type(events, "tool_result")[0]["output"] == "accepted: ok=True"

        agent.send(msg("m2", "call the tool named elicitation"))
        assert agent.until("tool_request")[-1]["call_id"] == "e1"
        agent.send({"type": "tool_deny", "call_id": "e1"})
        assert of_type(agent.until("stream_end"), "tool_cancelled")[0]["call_id"] == "e1"

        agent.send(msg("m3", "ask again"))
        agent.until("tool_request")
        agent.send({"type": "tool_approve", "call_id": "q2"})
        request = agent.until("tool_request")[-1]
        assert request["tool"]["args"]["message"] == "Again?"
        agent.send({"type": "tool_deny", "call_id": request["call_id"], "reason": "no"})
        events = agent.until("stream_end")
        assert of_type(events, "tool_result")[0]["output"] == "decline"
    records = list_records(kind="agent.mcp_elicitation")
    assert [(r.fields["server"], r.fields["action"]) for r in records] == [
        ("live", "accept"),
        ("live", "decline"),
    ]
    assert all(r.run_id == ready["session_id"] for r in records)


def test_an_unanswered_elicitation_is_withdrawn_by_stop_and_declined_when_input_closes(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """Asked even in yolo mode (it asks a person; it runs nothing); `stop`
    withdraws it before the turn's `stream_end`; with input closed it is
    declined, never left hanging."""
    ws = make_ws(tmp_path / "ws", live_toml())
    server.add(
        Turn(tool_calls=[ToolCall("mcp__live__confirm", {"question": "Ship it?"}, id="q1")]),
        Turn(tool_calls=[ToolCall("mcp__live__confirm", {"question": "Now?"}, id="q2")]),
        Turn(text="Nobody answered."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        assert agent.next()["type"] == "ready"
        agent.send(msg("m1", "ask"))
        request = agent.until("tool_request")[-1]
        assert request["tool"]["name"] == "mcp__live__elicitation"
        agent.send({"type": "stop"})
        events = agent.until("stream_end")
        cancelled = {e["call_id"]: e["reason"] for e in of_type(events, "tool_cancelled")}
        assert set(cancelled) == {request["call_id"], "q1"}

        agent.send(msg("m2", "ask again"))
        assert agent.until("tool_request")[-1]["tool"]["args"]["message"] == "Now?"
        agent.close_stdin()
        events = agent.until("stream_end")
        assert of_type(events, "tool_result")[0]["output"] == "decline"
        assert agent.wait() == 0
    records = list_records(kind="agent.mcp_elicitation")
    assert [r.fields["action"] for r in records] in (
        ["cancel", "decline"],  # asked inside the call (2026-07-28): cancelled with it
        ["decline", "decline"],  # asked as a request of its own: declined
    )


def test_roots_are_the_session_workspace(server: FakeLLMServer, tmp_path: Path) -> None:
    """A server asking for the client's roots gets the workspace, and only it."""
    ws = make_ws(tmp_path / "my ws", live_toml())
    server.add(Turn(tool_calls=[ToolCall("mcp__live__roots", {}, id="r1")]), Turn(text="Listed."))
    with anthropic(server, ws, "--auto-approve") as agent:
        assert agent.next()["type"] == "ready"
        agent.send(msg("m1", "roots"))
        result = of_type(agent.until("stream_end"), "tool_result")[0]
    assert result["status"] == "success", result
    assert result["output"] == f"my ws {ws.resolve().as_uri()}"


def test_resources_are_listed_and_read_through_one_tool(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """`mcp__live__resources`: no `uri` lists resources and templates; a text
    resource is its text, a template's instance resolves, a lone image is an
    image result, an unknown URI is an error result."""
    ws = make_ws(tmp_path / "ws", live_toml())
    server.add(
        Turn(
            tool_calls=[
                ToolCall("mcp__live__resources", {}, id="l1"),
                ToolCall("mcp__live__resources", {"uri": "live://readme"}, id="r1"),
                ToolCall("mcp__live__resources", {"uri": "live://notes/x"}, id="r2"),
                ToolCall("mcp__live__resources", {"uri": "live://dot"}, id="r3"),
                ToolCall("mcp__live__resources", {"uri": "live://nothing"}, id="r4"),
            ]
        ),
        Turn(text="Read."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        ready = agent.next()
        assert "mcp__live__resources" in ready["capabilities"]["mcp_servers"]["live"]["tools"]
        agent.send(msg("m1", "resources"))
        results = {e["call_id"]: e for e in of_type(agent.until("stream_end"), "tool_result")}
    listing = results["l1"]["output"].splitlines()
    assert "live://readme readme (text/plain) About this server" in listing
    assert "live://notes/{name} (template) note" in listing
    assert results["r1"]["output"] == "the live server's readme"
    assert results["r2"]["output"] == "note x"
    assert results["r3"]["output_type"] == "image"
    assert results["r4"]["status"] == "error"
    offered = {t["name"]: t for t in server.requests[0]["tools"]}
    assert offered["mcp__live__resources"]["input_schema"]["properties"]["uri"]["type"] == "string"


def test_a_prompt_is_a_slash_command(server: FakeLLMServer, tmp_path: Path) -> None:
    """`/mcp__live__review PATH FOCUS...` sends the prompt's text instead of
    the command (the last argument takes the rest of the line); a missing
    required argument is a `protocol_error` and the model is not called;
    other text starting with `/` is sent as typed. A prompt the server adds
    later (`prompts/list_changed`) becomes a command."""
    ws = make_ws(tmp_path / "ws", live_toml())
    server.add(
        Turn(text="Reviewed."),
        Turn(text="Sent as typed."),
        Turn(text="Not a command yet."),
        Turn(tool_calls=[ToolCall("mcp__live__add_prompt", {}, id="a1")]),
        Turn(text="Added."),
        Turn(text="Summarised."),
    )
    with anthropic(server, ws, "--auto-approve") as agent:
        ready = agent.next()
        assert ready["capabilities"]["mcp_servers"]["live"]["prompts"] == ["mcp__live__review"]
        agent.send(msg("m1", "/mcp__live__review src/app.py error handling"))
        assert of_type(agent.until("stream_end"), "text_delta")
        agent.send(msg("m2", "/mcp__live__review"))
        events = agent.until("stream_end")
        [error] = of_type(events, "error")
        assert error["msg_id"] == "m2" and error["error"]["code"] == "protocol_error"
        assert "needs path" in error["error"]["message"]
        assert "<path> [focus]" in error["error"]["message"]
        agent.send(msg("m3", "/etc/hosts is a path"))
        agent.until("stream_end")
        # a server that adds a prompt: it is a command from then on
        agent.send(msg("m4", "/mcp__live__summary"))
        assert of_type(agent.until("stream_end"), "text_delta")
        agent.send(msg("m5", "add a prompt"))
        events = agent.until("stream_end")
        while not any("prompts changed" in e.get("message", "") for e in of_type(events, "info")):
            events.append(agent.next())
        agent.send(msg("m6", "/mcp__live__summary"))
        agent.until("stream_end")
    assert len(server.requests) == 6
    assert "/mcp__live__summary" in json.dumps(server.requests[2]["messages"][-1]["content"])
    assert "Please summarise" in json.dumps(server.requests[5]["messages"][-1]["content"])
    first = server.requests[0]["messages"][-1]["content"]
    texts = [b["text"] for b in first] if isinstance(first, list) else [first]
    assert texts[-1] == "Please review src/app.py with a focus on error handling"
    last = server.requests[1]["messages"][-1]["content"]
    assert "/etc/hosts is a path" in json.dumps(last)
