"""The stdio transport the `acp` library is handed (`_framing.StdioFrames`):
what the library receives for a run of lines, what the client is sent, and
a client gone from stdout as the library's ConnectionError."""

from __future__ import annotations

import asyncio
import io
import json
import os
from typing import Any

import pytest

from flightdeck.agent.acp._framing import StdioFrames
from tests.agent_acp._malformed import malformed_answers
from tests.agent_acp._raw import strict_json


class _Out(io.RawIOBase):
    """stdout as a pipe whose other end this test reads."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()

    def fileno(self) -> int:
        return self.write_end

    def lines(self) -> list[Any]:
        os.close(self.write_end)
        with os.fdopen(self.read_end, "rb") as pipe:
            return [strict_json(line) for line in pipe.read().splitlines()]


def _serve(stdin: bytes, sent: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """The messages the library receives until end of input, after `sent`
    went out; and the lines the client got (the `sent` ones excluded)."""
    out = _Out()

    async def run() -> list[Any]:
        frames = StdioFrames(io.BytesIO(stdin), out)  # type: ignore[arg-type]
        for message in sent:
            await frames.send(message)
        got = []
        while (message := await frames.receive()) is not None:
            got.append(message)
        return got

    received = asyncio.run(run())
    return received, out.lines()[len(sent) :]


def test_the_library_gets_only_what_passed_and_the_client_its_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    permission = {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission"}
    read = {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file"}
    request = {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {}}
    stdin = b"\n".join(
        [
            b"",
            b"   ",
            b"not json",
            json.dumps(request).encode(),
            malformed_answers(0)["error is a string"],
            b'{"jsonrpc": "2.0", "id": 1, "result": {"content": "text"}}',
            b'{"jsonrpc": "2.0", "id": 1, "result": {"content": "again"}}',
            b'{"jsonrpc":"2.0","id":true,"method":"initialize"}',
        ]
    )
    received, replies = _serve(stdin + b"\n", [permission, read])
    assert received[0] == request
    assert received[1]["id"] == 0 and "malformed" in received[1]["error"]["message"]
    assert received[2] == {"jsonrpc": "2.0", "id": 1, "result": {"content": "text"}}
    assert len(received) == 3
    assert [(r["id"], r["error"]["code"]) for r in replies] == [(None, -32700), (None, -32600)]
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "flightdeck agent: acp: dropped: the client's answer to session/request_permission"
        " is malformed: error must be an object, not str",
        "flightdeck agent: acp: dropped a response to no pending request (id 1)",
    ]


def test_a_line_over_the_limit_fails_what_was_pending(capsys: pytest.CaptureFixture[str]) -> None:
    read = {"jsonrpc": "2.0", "id": 4, "method": "fs/read_text_file"}
    huge = b'{"jsonrpc": "2.0", "id": 4, "result": {"content": "' + b"y" * (16 << 20) + b'"}}'
    received, replies = _serve(huge + b"\n", [read])
    [failure] = received
    assert failure["id"] == 4 and failure["error"]["data"] == {"code": "acp.response_too_large"}
    [reply] = replies
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert "Line too long" in reply["error"]["data"]["details"]
    assert "failed 1 pending request(s)" in capsys.readouterr().err


def test_a_client_gone_from_stdout_is_a_connection_error() -> None:
    async def run() -> None:
        read_end, write_end = os.pipe()
        os.close(read_end)  # nobody reads: a write fails with EPIPE
        with os.fdopen(write_end, "wb") as stdout:
            frames = StdioFrames(io.BytesIO(b""), stdout)
            with pytest.raises(ConnectionError, match="the client closed stdout"):
                await frames.send({"jsonrpc": "2.0", "method": "m"})
            assert frames.closed
            # a bad line's error cannot be sent: the client is gone, as at EOF
            frames = StdioFrames(io.BytesIO(b"not json\n"), stdout)
            assert await frames.receive() is None
        out = _Out()
        frames = StdioFrames(io.BytesIO(b""), out)  # type: ignore[arg-type]
        await frames.close()
        with pytest.raises(ConnectionError, match="the client closed stdout"):
            await frames.send({"jsonrpc": "2.0", "method": "m"})
        assert out.lines() == []

    asyncio.run(run())
