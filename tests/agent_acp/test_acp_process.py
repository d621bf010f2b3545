"""`flightdeck agent --acp` as a process, driven by the `acp` library's client
against loopback fake model servers: one test per ACP method and per stop
reason the agent reports. One agent process serves the module (see
_harness.py); each test works in sessions of its own."""

from __future__ import annotations

import asyncio
import base64
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    EnvVariable,
    FileSystemCapabilities,
    HttpMcpServer,
    McpServerStdio,
)

from flightdeck.guard import bwrap_path
from tests.agent_acp._harness import Agent, Client, run, separate, spawn, workspace
from tests.agent_ext._common import NOTES_SERVER, SERVERS, authorize, oauth_server
from tests.fakes import FakeLLMServer, ToolCall, Turn

KEY = {"ANTHROPIC_API_KEY": "test"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("acphome")


@pytest.fixture(scope="module")
def agent(home: Path) -> Iterator[Agent]:
    running = Agent({**KEY, "FLIGHTDECK_HOME": str(home)}, "--provider", "anthropic")
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def ws(tmp_path: Path, server: FakeLLMServer, home: Path) -> Path:
    return workspace(tmp_path / "ws", server, home=home)


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def new(agent: Agent, ws: Path, servers: list[Any] | None = None) -> str:
    session = agent.call(agent.conn.new_session(cwd=str(ws), mcp_servers=servers or []))
    return str(session.session_id)


def prompt(agent: Agent, sid: str, *blocks: Any) -> str:
    reply = agent.call(agent.conn.prompt(session_id=sid, prompt=list(blocks)))
    return str(reply.stop_reason)


def _write(name: str) -> Turn:
    return Turn(tool_calls=[ToolCall("Write", {"file_path": name, "content": "x"})])


def test_initialize_advertises_load_session_images_and_embedded_context(agent: Agent) -> None:
    reply = agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION))
    assert reply.protocol_version == 1
    caps = reply.agent_capabilities
    assert caps is not None and caps.load_session is True
    prompt_caps = caps.prompt_capabilities
    assert prompt_caps is not None and prompt_caps.image and prompt_caps.embedded_context
    assert not prompt_caps.audio
    assert reply.agent_info is not None and reply.agent_info.name == "flightdeck"


def test_new_session_then_prompt_streams_thought_and_text_and_ends_the_turn(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(text="Hello there", thinking="let me think"))
    session = agent.call(agent.conn.new_session(cwd=str(ws), mcp_servers=[]))
    assert session.modes is not None and session.modes.current_mode_id == "default"
    assert [m.id for m in session.modes.available_modes] == ["default", "auto_edit", "yolo"]
    assert prompt(agent, session.session_id, text("hi")) == "end_turn"
    log = agent.client.log(session.session_id)
    assert log.text() == "Hello there"
    assert log.text("agent_thought_chunk") == "let me think"
    assert log.kinds().index("agent_thought_chunk") < log.kinds().index("agent_message_chunk")
    assert server.requests[0]["messages"][-1]["content"][-1]["text"] == "hi"


def test_sessions_are_separate(agent: Agent, server: FakeLLMServer, tmp_path: Path) -> None:
    server.add(Turn(text="one"), Turn(text="two"))
    first, second = (
        new(agent, workspace(tmp_path / "a", server, home=agent.home)),
        new(agent, workspace(tmp_path / "b", server, home=agent.home)),
    )
    prompt(agent, first, text("to a"))
    prompt(agent, second, text("to b"))
    assert agent.client.log(first).text() == "one" and agent.client.log(second).text() == "two"
    assert len(server.requests[1]["messages"]) == 1  # b's model call carries b's history only


def test_prompt_with_an_image_and_embedded_context_reaches_the_model(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(text="seen"))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 16).decode()
    sid = new(agent, ws)
    image = {"type": "image", "data": png, "mimeType": "image/png"}
    resource = {
        "type": "resource",
        "resource": {"uri": "file:///notes.md", "text": "remember the milk"},
    }
    assert prompt(agent, sid, text("what is this?"), image, resource) == "end_turn"
    blocks = server.requests[0]["messages"][-1]["content"]
    assert blocks[0]["type"] == "image" and blocks[0]["source"]["data"] == png
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    assert texts[0] == "what is this?"
    assert 'uri="file:///notes.md"' in texts[1] and "remember the milk" in texts[1]
    with pytest.raises(RequestError) as bad:
        prompt(agent, sid, {"type": "audio", "data": png, "mimeType": "audio/wav"})
    assert bad.value.code == -32602 and len(server.requests) == 1


@pytest.mark.parametrize("answer", ["allow_once", "reject_once", None])
def test_a_tool_call_asks_permission_and_runs_only_when_allowed(
    agent: Agent, server: FakeLLMServer, ws: Path, answer: str | None
) -> None:
    server.add(_write("a.txt"), Turn(text="done"))
    sid = new(agent, ws)
    log = agent.client.log(sid)
    log.answers.append(answer)
    assert prompt(agent, sid, text("write")) == "end_turn"
    [(call, options)] = log.asked
    assert call.kind == "edit" and call.raw_input == {"file_path": "a.txt", "content": "x"}
    assert call.locations is not None and call.locations[0].path == str(ws / "a.txt")
    assert [o.kind for o in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    updates = log.tools()
    assert updates[0].session_update == "tool_call" and updates[0].status == "pending"
    assert updates[-1].status == ("completed" if answer == "allow_once" else "failed")
    assert (ws / "a.txt").exists() == (answer == "allow_once")
    [content] = updates[-1].content
    if answer == "allow_once":  # a Write is shown as the file's diff
        assert content.type == "diff" and content.path == str(ws / "a.txt")
        assert (content.old_text, content.new_text) == (None, "x")
    else:
        assert content.type == "content" and content.content.text


@pytest.mark.parametrize("answer", ["allow_always", "reject_always"])
def test_always_answers_hold_for_the_rest_of_the_session(
    agent: Agent, server: FakeLLMServer, ws: Path, answer: str
) -> None:
    server.add(_write("a.txt"), Turn(text="one"), _write("b.txt"), Turn(text="two"))
    sid = new(agent, ws)
    log = agent.client.log(sid)
    log.answers.append(answer)
    prompt(agent, sid, text("first"))
    prompt(agent, sid, text("second"))
    assert len(log.asked) == 1  # the second Write was settled without asking
    allowed = answer == "allow_always"
    assert (ws / "a.txt").exists() == allowed and (ws / "b.txt").exists() == allowed


def test_set_session_mode_yolo_runs_tools_without_asking(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(_write("a.txt"), Turn(text="done"))
    sid = new(agent, ws)
    agent.call(agent.conn.set_session_mode(session_id=sid, mode_id="yolo"))
    with pytest.raises(RequestError) as bad:
        agent.call(agent.conn.set_session_mode(session_id=sid, mode_id="reckless"))
    assert bad.value.code == -32602
    prompt(agent, sid, text("write"))
    log = agent.client.log(sid)
    assert log.asked == []
    starts = [u for u in log.tools() if u.session_update == "tool_call"]
    assert starts[0].status == "in_progress" and starts[0].title == "Write to a.txt"
    assert log.tools()[-1].status == "completed"
    assert (ws / "a.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("turn", "toml", "expected"),
    [
        (Turn(text="cut", stop_reason="max_tokens"), "", "max_tokens"),
        (Turn(text="no", stop_reason="refusal"), "", "refusal"),
        (_write("a.txt"), 'max_turns = 1\nmode = "yolo"\n', "max_turn_requests"),
    ],
    ids=["max_tokens", "refusal", "max_turn_requests"],
)
def test_stop_reasons(
    agent: Agent, server: FakeLLMServer, tmp_path: Path, turn: Turn, toml: str, expected: str
) -> None:
    server.add(turn)
    sid = new(agent, workspace(tmp_path / "ws", server, toml, home=agent.home))
    assert prompt(agent, sid, text("go")) == expected


def test_session_cancel_ends_the_prompt_with_cancelled(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(deltas=200, delta_delay=0.05), Turn(text="after"))
    sid = new(agent, ws)
    log = agent.client.log(sid)

    async def go() -> str:
        running = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text("go")]))
        while "agent_message_chunk" not in log.kinds():
            await asyncio.sleep(0.02)
        await agent.conn.cancel(session_id=sid)
        return str((await running).stop_reason)

    assert agent.call(go()) == "cancelled"
    assert prompt(agent, sid, text("again")) == "end_turn"  # the session goes on
    assert log.text().endswith("after")


def test_cancel_also_ends_a_prompt_queued_behind_the_running_one(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(deltas=200, delta_delay=0.05), Turn(text="never"))
    sid = new(agent, ws)
    log = agent.client.log(sid)

    async def go() -> list[str]:
        first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text("one")]))
        while "agent_message_chunk" not in log.kinds():
            await asyncio.sleep(0.02)
        second = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text("two")]))
        await asyncio.sleep(0.3)  # the second prompt is queued by now
        await agent.conn.cancel(session_id=sid)
        return [str((await first).stop_reason), str((await second).stop_reason)]

    assert agent.call(go()) == ["cancelled", "cancelled"]
    assert len(server.requests) == 1 and "never" not in log.text()


def test_cancel_while_a_permission_is_pending(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(_write("a.txt"))
    sid = new(agent, ws)
    log = agent.client.log(sid)
    log.answers.append("allow_once")
    log.hold = asyncio.Event()

    async def go() -> str:
        running = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text("go")]))
        while not log.asked:
            await asyncio.sleep(0.02)
        await agent.conn.cancel(session_id=sid)
        reply = await running
        assert log.hold is not None
        log.hold.set()  # the client answers allow, late: nothing runs
        await asyncio.sleep(0.2)
        return str(reply.stop_reason)

    assert agent.call(go()) == "cancelled"
    assert log.tools()[-1].status == "failed"
    assert not (ws / "a.txt").exists()


def test_a_provider_error_fails_the_prompt_with_its_message(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(error=400, error_message="bad request from the fake"))
    sid = new(agent, ws)
    with pytest.raises(RequestError) as failed:
        prompt(agent, sid, text("go"))
    assert "bad request from the fake" in str(failed.value)
    assert (failed.value.data or {}).get("code") == "provider_error"


def test_bad_session_requests_are_errors_and_the_agent_goes_on(
    agent: Agent, tmp_path: Path
) -> None:
    with pytest.raises(RequestError) as missing_dir:
        agent.call(agent.conn.new_session(cwd=str(tmp_path / "nosuch"), mcp_servers=[]))
    assert missing_dir.value.data == {"code": "config_error"}
    with pytest.raises(RequestError) as relative:
        agent.call(agent.conn.new_session(cwd="relative/dir", mcp_servers=[]))
    assert relative.value.code == -32602
    with pytest.raises(RequestError) as unknown:
        prompt(agent, "nosuch", text("hi"))
    assert unknown.value.code == -32602
    with pytest.raises(RequestError) as not_stored:
        agent.call(agent.conn.load_session(cwd=str(tmp_path), session_id="nosuch", mcp_servers=[]))
    assert not_stored.value.code == -32002
    assert agent.proc.returncode is None


def test_malformed_json_rpc_gets_error_responses_and_the_agent_lives(agent: Agent) -> None:
    async def go() -> list[dict[str, Any]]:
        seen = len(agent.client.incoming)
        assert agent.proc.stdin is not None
        agent.proc.stdin.write(b'not json\n[1, 2]\n{"jsonrpc": "2.0"}\n{"method": 7, "id": 3}\n')
        agent.proc.stdin.write(b"[" * 100_000 + b"\n")  # past the decoder's recursion limit
        await agent.proc.stdin.drain()
        while len(agent.client.incoming) < seen + 5:
            await asyncio.sleep(0.02)
        return agent.client.incoming[seen:]

    errors = agent.call(go())
    assert [(e["id"], e["error"]["code"]) for e in errors] == [
        (None, -32700),
        (None, -32600),
        (None, -32600),
        (None, -32600),
        (None, -32700),
    ]
    reply = agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION))
    assert reply.protocol_version == 1 and agent.proc.returncode is None


def test_client_mcp_servers_are_connected_for_the_session(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(Turn(text="ok"))
    notes = McpServerStdio(
        name="notes",
        command=sys.executable,
        args=[str(NOTES_SERVER)],
        env=[EnvVariable(name="NOTES_TEST", value="1")],
    )
    prompt(agent, new(agent, ws, [notes]), text("hi"))
    assert "mcp__notes__remember" in {t["name"] for t in server.requests[0]["tools"]}


def test_client_mcp_servers_stay_in_their_session_show_progress_and_ask(
    agent: Agent, server: FakeLLMServer, tmp_path: Path
) -> None:
    """A session's `mcpServers` serve that session only. Their calls' progress
    is `tool_call_update` content while in progress; an elicitation is a
    permission request (allowed: accepted, with the form's defaults)."""
    live = McpServerStdio(
        name="live", command=sys.executable, args=[str(SERVERS / "live_server.py")], env=[]
    )
    server.add(
        Turn(
            tool_calls=[
                ToolCall("mcp__live__count", {"steps": 2}, id="c1"),
                ToolCall("mcp__live__confirm", {"question": "Ship it?"}, id="q1"),
            ]
        ),
        Turn(text="done"),
        Turn(tool_calls=[ToolCall("mcp__live__count", {"steps": 2}, id="c2")]),
        Turn(text="not here"),
    )
    with_live = new(agent, workspace(tmp_path / "a", server, home=agent.home), [live])
    without = new(agent, workspace(tmp_path / "b", server, home=agent.home))
    agent.call(agent.conn.set_session_mode(session_id=with_live, mode_id="yolo"))
    log = agent.client.log(with_live)
    log.answers.append("allow_once")
    assert prompt(agent, with_live, text("go")) == "end_turn"
    [(call, _options)] = log.asked  # yolo: only the elicitation asks
    assert call.title == "MCP server live asks: Ship it?"
    assert call.raw_input["message"] == "Ship it?"
    updates = log.tools()
    progress = [
        u.content[0].content.text
        for u in updates
        if u.tool_call_id == "c1" and u.status == "in_progress" and u.content
    ]
    assert progress == ["1/2 step 1", "2/2 step 2"]
    [answered] = [u for u in updates if u.tool_call_id == "q1" and u.status == "completed"]
    assert answered.content[0].content.text == "accepted: ok=False"

    prompt(agent, without, text("go"))
    assert "mcp__live__count" in {t["name"] for t in server.requests[0]["tools"]}
    assert not [t for t in server.requests[2]["tools"] if t["name"].startswith("mcp__")]
    [failed] = [u for u in agent.client.log(without).tools() if u.status == "failed"]
    assert failed.content[0].content.text == "Unknown tool: mcp__live__count"


def test_load_session_replays_the_history_in_a_new_process(
    agent: Agent, server: FakeLLMServer, ws: Path, home: Path
) -> None:
    server.add(_write("a.txt"), Turn(text="written"), Turn(text="again"))
    sid = new(agent, ws)
    agent.call(agent.conn.set_session_mode(session_id=sid, mode_id="yolo"))
    prompt(agent, sid, text("write a"))
    client = Client()

    async def go() -> None:
        env = {**KEY, "FLIGHTDECK_HOME": str(home)}
        async with separate(client, "--provider", "anthropic", env=env) as conn:
            loaded = await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
            assert loaded is not None and loaded.modes is not None
            log = client.log(sid)
            assert log.kinds() == [
                "user_message_chunk",
                "tool_call",
                "tool_call_update",
                "agent_message_chunk",
            ]
            assert log.text("user_message_chunk") == "write a" and log.text() == "written"
            assert log.updates[2].status == "completed"
            reply = await conn.prompt(session_id=sid, prompt=[text("more")])  # type: ignore[list-item]
            assert reply.stop_reason == "end_turn"

    run(go)
    # the loaded conversation goes on: the model sees the earlier turns
    assert [m["role"] for m in server.requests[-1]["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_read_write_edit_go_through_the_client_fs_when_it_offers_one(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    (ws / "notes.txt").write_text("on disk\n")
    unsaved = str(ws / "notes.txt")
    agent.client.buffers[unsaved] = "unsaved line\n"
    server.add(
        Turn(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
        Turn(
            tool_calls=[
                ToolCall(
                    "Edit",
                    {"file_path": "notes.txt", "old_string": "unsaved", "new_string": "edited"},
                ),
                ToolCall("Write", {"file_path": "new/n.txt", "content": "fresh"}),
                ToolCall("Read", {"file_path": "../outside.txt"}),
            ]
        ),
        Turn(text="done"),
    )
    fs = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=fs))
    try:
        sid = new(agent, ws)
    finally:  # later sessions of the shared agent use the disk again
        agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION))
    agent.call(agent.conn.set_session_mode(session_id=sid, mode_id="yolo"))
    assert prompt(agent, sid, text("edit")) == "end_turn"
    results = server.requests[1]["messages"][-1]["content"]
    assert "unsaved line" in results[0]["content"][0]["text"]  # the buffer, not the disk
    assert agent.client.buffers[unsaved] == "edited line\n"
    diffs = [c for u in agent.client.log(sid).tools() for c in u.content or [] if c.type == "diff"]
    assert sorted((d.path, d.old_text or "", d.new_text) for d in diffs) == [  # tools run at once
        (str(ws / "new" / "n.txt"), "", "fresh"),
        (unsaved, "unsaved line\n", "edited line\n"),
    ]
    assert agent.client.buffers[str(ws / "new" / "n.txt")] == "fresh"
    assert (ws / "notes.txt").read_text() == "on disk\n"  # the editor saves, not the agent
    assert not (ws / "new" / "n.txt").exists()
    outside = server.requests[2]["messages"][-1]["content"][2]
    assert outside["is_error"] and not any("outside" in p for _, p in agent.client.fs_calls)


def test_bash_runs_in_the_client_terminal_when_it_offers_one(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    server.add(
        Turn(
            tool_calls=[
                ToolCall("Bash", {"command": "echo from-terminal; echo to-stderr >&2"}),
                ToolCall("Bash", {"command": "sleep 20", "timeout": 300}),
            ]
        ),
        Turn(text="done"),
    )
    caps = ClientCapabilities(terminal=True)
    agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps))
    try:
        sid = new(agent, ws)
    finally:
        agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION))
    agent.call(agent.conn.set_session_mode(session_id=sid, mode_id="yolo"))
    assert prompt(agent, sid, text("run")) == "end_turn"
    echo, sleep = server.requests[1]["messages"][-1]["content"]
    assert echo["content"][0]["text"].startswith("exit code: 0\noutput:\n")
    assert (
        "from-terminal" in echo["content"][0]["text"] and "to-stderr" in echo["content"][0]["text"]
    )
    assert sleep["is_error"] and "timed out" in sleep["content"][0]["text"]
    calls = agent.client.terminal_calls
    assert sorted(c for c in calls if c[0] == "create") == [
        ("create", "term-1"),
        ("create", "term-2"),
    ]
    assert {t for kind, t in calls if kind == "release"} == {"term-1", "term-2"}
    assert [kind for kind, _ in calls].count("kill") == 1
    # the client runs the agent's command line: the sandbox's when there is one
    [argv] = [a for a, _, _ in agent.client.terminals.values() if a[-1].startswith("echo")]
    assert argv[-1] == "echo from-terminal; echo to-stderr >&2"
    if bwrap_path():
        assert "--clearenv" in argv
    shown = [
        c.terminal_id
        for u in agent.client.log(sid).tools()
        for c in u.content or []
        if c.type == "terminal"
    ]
    assert sorted(shown) == ["term-1", "term-2"]


def test_sigterm_ends_a_running_turn_and_the_process_cleanly(
    server: FakeLLMServer, ws: Path, home: Path
) -> None:
    server.add(Turn(deltas=400, delta_delay=0.05))
    client = Client()

    async def go() -> None:
        env = {**KEY, "FLIGHTDECK_HOME": str(home)}
        async with spawn(client, "--provider", "anthropic", env=env) as (conn, proc):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            running = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text("go")]))  # type: ignore[list-item]
            while "agent_message_chunk" not in client.log(sid).kinds():
                await asyncio.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 20) == 0  # handled, not killed
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    run(go)


def _sign_in_session(agent: Agent, ws: Path, url: str, found: Callable[[], str | None]) -> str:
    """Open a session with an OAuth-guarded server; while `session/new`
    waits, play the browser with the URL `found` reads off the client."""
    import httpx2

    servers = [HttpMcpServer(name="guarded", url=url, headers=[], type="http")]
    pending = asyncio.run_coroutine_threadsafe(
        asyncio.wait_for(agent.conn.new_session(cwd=str(ws), mcp_servers=servers), 60), agent.loop
    )
    deadline = time.monotonic() + 30
    while (sign_in := found()) is None:
        assert time.monotonic() < deadline, "no sign-in URL reached the client"
        assert not pending.done(), pending.result()
        time.sleep(0.05)
    assert httpx2.get(authorize(sign_in), timeout=10).status_code == 200
    return str(pending.result(60).session_id)


def test_an_oauth_servers_sign_in_url_reaches_the_client(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    """A client with `elicitation.url` is asked an URL elicitation, completed
    (`elicitation/complete`) when the browser came back (declined:
    the sign-in ends at once, the session opens without the server); one
    without gets the URL as an agent message. Either way, after the sign-in
    the server's tools serve the session."""
    server.add(Turn(tool_calls=[ToolCall("mcp__guarded__whoami", {})]), Turn(text="done"))
    caps = ClientCapabilities(elicitation=ElicitationCapabilities(url={}))
    agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps))
    client = agent.client
    try:
        with oauth_server() as url:

            def asked() -> str | None:
                return str(client.elicitations[-1][1].url) if client.elicitations else None

            sid = _sign_in_session(agent, ws, url, asked)
            message, mode = client.elicitations[-1]
            assert "guarded" in message and mode.session_id == sid
            deadline = time.monotonic() + 10
            while mode.elicitation_id not in client.completed:  # the browser came back
                assert time.monotonic() < deadline, client.completed
                time.sleep(0.05)
            agent.call(agent.conn.set_session_mode(session_id=sid, mode_id="yolo"))
            assert prompt(agent, sid, text("who")) == "end_turn"
            result = server.requests[1]["messages"][-1]["content"][0]
            assert result["content"][0]["text"] == "signed in"
    finally:
        agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION))

    client.elicitation_answer = "decline"
    agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps))
    try:
        with oauth_server() as url:  # declined: the session opens at once, without it
            servers = [HttpMcpServer(name="guarded", url=url, headers=[], type="http")]
            declined = agent.call(agent.conn.new_session(cwd=str(ws), mcp_servers=servers))
            assert client.elicitations[-1][1].session_id == declined.session_id
    finally:
        client.elicitation_answer = "accept"
        agent.call(agent.conn.initialize(protocol_version=PROTOCOL_VERSION))

    asked_before = len(client.elicitations)
    with oauth_server() as url:

        def told() -> str | None:
            for log in list(client.logs.values()):
                for chunk in log.text().split():
                    if chunk.startswith(url.removesuffix("/mcp")):
                        return chunk
            return None

        sid = _sign_in_session(agent, ws, url, told)
        assert len(client.elicitations) == asked_before
        assert "needs you to sign in" in client.log(sid).text()


def test_mcp_prompts_are_the_sessions_slash_commands(
    agent: Agent, server: FakeLLMServer, ws: Path
) -> None:
    """An `available_commands_update` lists the session's MCP prompts with
    their argument hint; a prompt starting with one sends the prompt's text."""
    live = McpServerStdio(
        name="live", command=sys.executable, args=[str(SERVERS / "live_server.py")], env=[]
    )
    server.add(Turn(text="reviewed"))
    sid = new(agent, ws, [live])
    log = agent.client.log(sid)
    deadline = time.monotonic() + 10
    while "available_commands_update" not in log.kinds():
        assert time.monotonic() < deadline, log.kinds()
        time.sleep(0.05)
    [update] = [u for u in log.updates if u.session_update == "available_commands_update"]
    [command] = update.available_commands
    assert command.name == "mcp__live__review"
    assert command.description == "Ask for a review of one file."
    assert command.input is not None and command.input.root.hint == "<path> [focus]"
    assert prompt(agent, sid, text("/mcp__live__review a.py")) == "end_turn"
    assert "Please review a.py" in str(server.requests[0]["messages"][-1]["content"])


def test_bad_notifications_are_one_line_diagnostics_not_tracebacks(tmp_path: Path) -> None:
    """A notification (no id) gets no response; one the agent cannot handle (a
    request method, an unknown one, a cancel with bad params) is named on
    stderr in one line, and the agent goes on to answer the next request."""
    import json
    import os
    import subprocess

    from tests.agent_acp._harness import FLIGHTDECK

    lines = [
        {"jsonrpc": "2.0", "method": "session/prompt", "params": {}},
        {"jsonrpc": "2.0", "method": "no/such", "params": {}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    ]
    done = subprocess.run(
        [str(FLIGHTDECK), "agent", "--acp"],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        env={**os.environ, "FLIGHTDECK_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "x"},
        timeout=60,
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply.get("id") for reply in replies] == [1] and "result" in replies[0]
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    for method in ("session/prompt", "no/such", "session/cancel"):
        assert f"notification method={method}" in err, err
    assert done.returncode == 0
