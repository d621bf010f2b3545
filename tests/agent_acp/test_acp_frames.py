"""A hostile ACP client against `flightdeck agent --acp`, as a process.

The client controls every byte of stdin. Each test writes frames the
library's own client never would (malformed answers to the agent's requests,
`NaN`, boolean ids, answers over the line limit) and checks what
docs/acp.md promises: JSON-RPC's error codes for requests, a line on stderr
and a failed request for answers, strict JSON on stdout, and a process that
goes on serving. One agent process serves the module (`RawAgent` checks
every line it writes); each test has its own fake model and workspace.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_acp._harness import workspace
from tests.agent_acp._malformed import ALLOW, malformed_answers
from tests.agent_acp._raw import RawAgent, allow_all
from tests.fakes import FakeLLMServer, ToolCall, Turn

FS = {"fs": {"readTextFile": True, "writeTextFile": True}}
OVER_LIMIT = 16 * 1024 * 1024 + 1  # characters of file text: its answer is over 16 MiB


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawAgent]:
    home = tmp_path_factory.mktemp("acphome")
    env = {"ANTHROPIC_API_KEY": "test", "FLIGHTDECK_HOME": str(home)}
    running = RawAgent(env, "--provider", "anthropic")
    running.request("initialize", {"protocolVersion": 1})
    try:
        yield running
    finally:
        assert running.close() == 0
        assert "Traceback" not in running.stderr, running.stderr


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def ws(tmp_path: Path, server: FakeLLMServer, agent: RawAgent) -> Path:
    return workspace(tmp_path / "ws", server, home=agent.home)


def _session(agent: RawAgent, ws: Path) -> str:
    reply = agent.request("session/new", {"cwd": str(ws), "mcpServers": []})
    return str(reply["result"]["sessionId"])


def _prompt(sid: str, words: str = "go") -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": words}]}


def _alive(agent: RawAgent) -> None:
    reply = agent.request("initialize", {"protocolVersion": 1})
    assert reply["result"]["protocolVersion"] == 1
    assert agent.proc.poll() is None


def _tool_results(server: FakeLLMServer, index: int) -> list[dict[str, Any]]:
    return list(server.requests[index]["messages"][-1]["content"])


@pytest.mark.parametrize("shape", sorted(malformed_answers(0)))
def test_a_malformed_answer_to_a_permission_request_denies_the_call(
    agent: RawAgent, server: FakeLLMServer, ws: Path, shape: str
) -> None:
    """The library would call `.get` on a string `error` (and die), take the
    `result` of an answer that also has an `error`, or parse NaN: each such
    answer is dropped with a line on stderr, and the request it was meant
    for fails, which denies the call; the turn goes on."""
    server.add(Turn(tool_calls=[ToolCall("Write", {"file_path": "a.txt", "content": "x"})]))
    server.add(Turn(text="after"))
    sid = _session(agent, ws)

    def malformed(request: dict[str, Any]) -> bytes:
        assert request["method"] == "session/request_permission"
        return malformed_answers(request["id"])[shape]

    reply = agent.request("session/prompt", _prompt(sid), malformed)
    assert reply["result"]["stopReason"] == "end_turn"
    assert not (ws / "a.txt").exists()
    [result] = _tool_results(server, 1)
    assert result["is_error"] and "malformed" in result["content"][0]["text"]
    assert agent.saw("dropped: the client's answer to session/request_permission is malformed")
    _alive(agent)


def test_answers_to_no_pending_request_are_named_on_stderr_and_dropped(agent: RawAgent) -> None:
    agent.send({"jsonrpc": "2.0", "id": 424242, "result": {}})
    agent.send({"jsonrpc": "2.0", "id": "x9", "error": "boom"})
    agent.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "huh"}})
    _alive(agent)  # the next message is this answer: nothing was written for them
    assert agent.saw("dropped a response to no pending request (id 424242)")
    assert agent.saw("dropped a response to no pending request (id 'x9')")
    assert agent.saw("the client reported an error: 'huh'")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_standard_json_constants_are_parse_errors_never_echoed(
    agent: RawAgent, constant: str
) -> None:
    """Python's `json.loads` reads NaN; the library's validation error then
    quoted the value back in a line no strict parser reads."""
    line = '{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":%s,"mcpServers":[]}}'
    agent.send((line % constant).encode())
    reply = agent.next()  # strict: a NaN in the line fails here
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert constant in reply["error"]["data"]["details"]
    _alive(agent)


@pytest.mark.parametrize("bad_id", ["true", "false", "1.5", "[]", '{"a":1}'])
def test_an_id_that_is_not_a_string_an_integer_or_null_is_an_invalid_request(
    agent: RawAgent, bad_id: str
) -> None:
    agent.send(
        b'{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":1}}'
        % bad_id.encode()
    )
    reply = agent.next()
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid request",
            "data": {"details": "id must be a string, an integer or null"},
        },
    }
    _alive(agent)


def test_a_boolean_id_never_answers_the_request_it_equals(
    agent: RawAgent, server: FakeLLMServer, ws: Path
) -> None:
    """In Python `False == 0`: an answer with `"id": false` was taken as the
    answer to the agent's request 0 (its first, in a new process). It is an
    invalid message; the request waits for a real answer, which decides."""
    server.add(Turn(tool_calls=[ToolCall("Write", {"file_path": "a.txt", "content": "x"})]))
    # A process of its own (its first request is 0), in the home that trusts `ws`.
    env = {"ANTHROPIC_API_KEY": "test", "FLIGHTDECK_HOME": str(agent.home)}
    fresh = RawAgent(env, "--provider", "anthropic")
    try:
        sid = _session(fresh, ws)

        def boolean_then_deny(request: dict[str, Any]) -> dict[str, Any]:
            assert request["id"] == 0
            fresh.send({"jsonrpc": "2.0", "id": False, "result": ALLOW})
            refusal = fresh.until(lambda m: "error" in m and m.get("id") is None)
            assert refusal["error"]["code"] == -32600
            deny = {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
            return {"jsonrpc": "2.0", "id": 0, "result": deny}

        reply = fresh.request("session/prompt", _prompt(sid), boolean_then_deny)
        assert reply["result"]["stopReason"] == "end_turn"
        assert len(fresh.asked) == 1 and not (ws / "a.txt").exists()
    finally:
        assert fresh.close() == 0


def test_a_models_non_finite_arguments_reach_the_client_as_null(
    agent: RawAgent, server: FakeLLMServer, ws: Path
) -> None:
    """Not only the client's bytes: the provider's decoder reads NaN in a
    model's tool arguments, and `rawInput` carries them to the client as
    null, in strict JSON (every line is read strictly here)."""
    arguments = '{"file_path": "a.txt", "content": "x", "n": NaN, "m": [Infinity]}'
    server.add(Turn(tool_calls=[ToolCall("Write", arguments)]), Turn(text="ok"))
    sid = _session(agent, ws)
    reply = agent.request("session/prompt", _prompt(sid))
    assert reply["result"]["stopReason"] == "end_turn"
    [asked] = [r for r in agent.asked if r["params"].get("sessionId") == sid]
    expected = {"file_path": "a.txt", "content": "x", "n": None, "m": [None]}
    assert asked["params"]["toolCall"]["rawInput"] == expected
    assert (ws / "a.txt").read_text() == "x"


def test_session_load_during_a_streaming_prompt_answers_it_cancelled(
    agent: RawAgent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(deltas=400, delta_delay=0.05))
    sid = _session(agent, ws)
    agent.send({"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": _prompt(sid)})
    agent.until(
        lambda m: (
            m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )
    )
    params = {"cwd": str(ws), "sessionId": sid, "mcpServers": []}
    agent.send({"jsonrpc": "2.0", "id": "l", "method": "session/load", "params": params})
    answered: dict[str, dict[str, Any]] = {}
    while len(answered) < 2:
        message = agent.until(lambda m: m.get("id") in ("p", "l") and "method" not in m)
        answered[message["id"]] = message
    assert answered["p"]["result"] == {"stopReason": "cancelled"}
    assert "result" in answered["l"]


def _big_file_client(big: Path, answers: list[str]) -> Any:
    """Answers each fs/read_text_file of `big` with the next of `answers`:
    "huge" (a line over the limit) or "window" (the asked-for lines)."""

    def answer(request: dict[str, Any]) -> bytes | dict[str, Any] | None:
        params = request["params"]
        if request["method"] != "fs/read_text_file" or params["path"] != str(big):
            return allow_all(request)
        kind = answers.pop(0)
        if kind == "huge":
            text = "y" * OVER_LIMIT
            head = b'{"jsonrpc":"2.0","id":%d,"result":{"content":"' % request["id"]
            return head + text.encode() + b'"}}'
        first, count = params.get("line"), params.get("limit")
        assert (first, count) != (None, None), "a window was asked for"
        lines = [f"line {n}" for n in range(first, first + count)]
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"content": "\n".join(lines)}}

    return answer


def test_a_file_answer_over_the_line_limit_fails_the_read_which_asks_for_its_window(
    agent: RawAgent, server: FakeLLMServer, tmp_path: Path
) -> None:
    """The agent asks for a whole file; an answer over 16 MiB cannot be read,
    and its request used to stay pending (the turn hung). Now it fails, and
    Read asks for its window only (`line`, `limit`); a window still too
    large, and an Edit of such a file, are tool errors."""
    ws = workspace(tmp_path / "ws", server, 'mode = "yolo"\n', home=agent.home)
    big = ws / "big.log"
    big.write_text("on disk\n")
    read = ToolCall("Read", {"file_path": "big.log", "offset": 5, "limit": 3})
    edit = ToolCall("Edit", {"file_path": "big.log", "old_string": "line 5", "new_string": "5"})
    server.add(Turn(tool_calls=[read]), Turn(tool_calls=[read]), Turn(tool_calls=[edit]))
    server.add(Turn(text="done"))
    agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": FS})
    try:
        sid = _session(agent, ws)
    finally:
        agent.request("initialize", {"protocolVersion": 1})
    # Read: whole, then its window; Read: both too large; Edit: the diff's
    # "before" and Edit's own read, both whole.
    answers = ["huge", "window", "huge", "huge", "huge", "huge"]
    reply = agent.request("session/prompt", _prompt(sid), _big_file_client(big, answers))
    assert reply["result"]["stopReason"] == "end_turn"
    assert answers == []
    reads = [r["params"] for r in agent.asked if r["method"] == "fs/read_text_file"]
    assert [(r.get("line"), r.get("limit")) for r in reads[-6:]] == [
        (None, None),
        (5, 3),
        (None, None),
        (5, 3),
        (None, None),
        (None, None),
    ]
    [window] = _tool_results(server, 1)
    assert window["content"][0]["text"].splitlines() == [
        "     5\tline 5",
        "     6\tline 6",
        "     7\tline 7",
        "... (more lines may follow; big.log is too large to be read whole through the "
        "client: use offset/limit to read them)",
    ]
    [too_large] = _tool_results(server, 2)
    assert too_large["is_error"]
    assert "over 16 MiB; read fewer lines" in too_large["content"][0]["text"]
    [edit_result] = _tool_results(server, 3)
    assert edit_result["is_error"]
    assert "too large to edit through the client" in edit_result["content"][0]["text"]
    assert agent.saw("failed 1 pending request(s)")
    _alive(agent)


def test_a_client_that_stops_reading_ends_the_agent_cleanly(tmp_path: Path) -> None:
    """The error answering a bad line cannot be written once the client has
    closed its end of stdout; that was a crash (SIGABRT). The client is gone:
    the agent ends as at end of input."""
    import os
    import subprocess

    from tests.agent_acp._harness import FLIGHTDECK

    read_end, write_end = os.pipe()
    env = {**os.environ, "ANTHROPIC_API_KEY": "test", "FLIGHTDECK_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [FLIGHTDECK, "agent", "--acp"],
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(write_end)
    os.close(read_end)  # nobody reads the agent's stdout any more
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(b"not json\n")
    proc.stdin.flush()
    assert proc.wait(30) == 0
    assert "Traceback" not in proc.stderr.read().decode(errors="replace")
    proc.stdin.close()
