"""Bounded protocol decoding (issue 11 item 4): every malformed line gets
exactly one `protocol_error` and the process keeps serving."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.agent.protocol import ProtocolProblem, read_command
from tests.agent._process import AgentProcess
from tests.agent_ext._fuzz_lines import malformed_lines
from tests.fakes import FakeLLMServer, Turn

KEY = {"ANTHROPIC_API_KEY": "test"}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _agent(server: FakeLLMServer, tmp_path: Path) -> AgentProcess:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return AgentProcess(
        "--provider", "anthropic", "--base-url", server.base_url, env=KEY, workspace=ws
    )


def test_deeply_nested_line_is_one_protocol_error_not_a_crash() -> None:
    line = '{"type":"message","msg_id":"m","input":' + "[" * 1000 + "]" * 1000 + "}"
    assert len(line) < 2100
    problem = read_command(line)
    assert isinstance(problem, ProtocolProblem) and "Nesting too deep" in problem.message
    # unbalanced and deep: still refused before the decoder recurses
    assert isinstance(read_command("[" * 100_000), ProtocolProblem)
    # 64 levels is within the bound and decodes normally
    ok = '{"type":"stop","x":' + "[" * 63 + "]" * 63 + "}"
    assert "unknown field x" in getattr(read_command(ok), "message", "")


def test_field_sizes_are_capped() -> None:
    long_id = {"type": "message", "msg_id": "m" * 2000, "input": "x"}
    assert isinstance(read_command(json.dumps(long_id)), ProtocolProblem)
    files = {"type": "message", "msg_id": "m", "input": "x", "files": ["f"] * 300}
    assert isinstance(read_command(json.dumps(files)), ProtocolProblem)
    keys = {"type": "stop", **{f"k{i}": 1 for i in range(2000)}}
    problem = read_command(json.dumps(keys))
    assert isinstance(problem, ProtocolProblem) and "(and 1995 more)" in problem.message
    args = {"type": "add_mcp_server", "name": "n", "transport": "stdio", "args": ["a"] * 2000}
    problem = read_command(json.dumps(args))
    assert isinstance(problem, ProtocolProblem) and "more than 1024 items" in problem.message
    ok = {"type": "message", "msg_id": "m" * 1024, "input": "x", "files": ["f"] * 256}
    assert not isinstance(read_command(json.dumps(ok)), ProtocolProblem)


def test_fuzz_slice_through_read_command_never_raises() -> None:
    # malformed_lines itself calls read_command on each candidate, so any
    # exception it raised would fail here; 3,000 is the deterministic slice.
    lines = list(malformed_lines(3_000, seed=11))
    assert len(lines) == 3_000 and all(b"\n" not in line for line in lines)


def test_fuzz_slice_through_the_process(server: FakeLLMServer, tmp_path: Path) -> None:
    lines = list(malformed_lines(1_500, seed=7))
    server.add(Turn(text="still serving"))
    with _agent(server, tmp_path) as agent:
        assert agent.next()["type"] == "ready"
        big = b'{"type":"message","msg_id":"big","input":"' + b"x" * (16 * 1024 * 1024) + b'"}'

        def feed() -> None:
            assert agent.proc.stdin is not None
            agent.proc.stdin.write(b"\n".join(lines) + b"\n")
            agent.proc.stdin.write(big + b"\n")
            agent.proc.stdin.flush()
            agent.send({"type": "message", "msg_id": "last", "input": "hi"})

        writer = threading.Thread(target=feed)
        writer.start()
        for _ in lines:
            event = agent.next()
            assert event["type"] == "error" and event["error"]["code"] == "protocol_error"
        too_long = agent.next()
        assert "Line too long" in too_long["error"]["message"]
        writer.join()
        events = agent.until("stream_end")
        assert events[0]["type"] == "stream_start"
        assert "".join(e.get("text", "") for e in events) == "still serving"
        agent.close_stdin()
        assert agent.wait() == 0
        assert "Traceback" not in agent.stderr()
