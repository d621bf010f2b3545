"""The frame check (`agent/acp/_frames.py`) and the strict writer
(`_framing.encode`) on their own: each refusal and bound of docs/acp.md
("Errors on the wire"), and, for any JSON a client can send, a verdict
instead of an exception and replies that are strict JSON. The process tests
(test_acp_frames.py) show the same through `flightdeck agent --acp`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.agent.acp._frames import (
    RESPONSE_INVALID,
    RESPONSE_TOO_LARGE,
    FrameCheck,
    Verdict,
)
from flightdeck.agent.acp._framing import encode
from tests.agent_acp._malformed import ALLOW, malformed_answers
from tests.agent_acp._raw import strict_json


def _line(message: Any) -> bytes:
    return json.dumps(message).encode()


def _waiting(*methods: str) -> FrameCheck:
    """A check that has sent requests 0, 1, ... with these methods."""
    check = FrameCheck()
    for request_id, method in enumerate(methods):
        check.sent({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}})
    return check


def _refusal(verdict: Verdict) -> tuple[int, str]:
    assert verdict.deliver == () and verdict.reply is not None
    assert verdict.reply["id"] is None and verdict.reply["jsonrpc"] == "2.0"
    error = verdict.reply["error"]
    names = {-32700: "Parse error", -32600: "Invalid request"}
    assert error["message"] == names[error["code"]]
    return error["code"], error["data"]["details"]


REQUEST = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 1}}


@pytest.mark.parametrize(
    "message",
    [
        REQUEST,
        {**REQUEST, "id": "abc"},
        {**REQUEST, "id": None},
        {**REQUEST, "id": -(10**30)},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
    ],
)
def test_requests_and_notifications_go_to_the_library_as_they_are(message: Any) -> None:
    assert FrameCheck().check(_line(message)) == Verdict(deliver=(message,))


@pytest.mark.parametrize(
    ("line", "code", "detail"),
    [
        (b"not json", -32700, "Expecting value"),
        (b'{"method": "\xff"}', -32700, "utf-8"),
        (b"[" * 100_000, -32700, "recursion"),
        (b"[1, 2]", -32600, "a message must be a JSON object"),
        (b'"text"', -32600, "a message must be a JSON object"),
        (b'{"jsonrpc": "2.0"}', -32600, "neither a request nor a response"),
        (b'{"method": 7, "id": 3}', -32600, "method must be a string"),
        (b'{"method": null, "id": 3}', -32600, "method must be a string"),
        (b'{"method": "m", "id": true}', -32600, "id must be a string, an integer or null"),
        (b'{"method": "m", "id": false}', -32600, "id must be"),
        (b'{"method": "m", "id": 1.0}', -32600, "id must be"),
        (b'{"method": "m", "id": [1]}', -32600, "id must be"),
        (b'{"method": "m", "id": {}}', -32600, "id must be"),
        (b'{"id": true, "result": {}}', -32600, "id must be"),
        (b'{"id": 1.5, "result": {}}', -32600, "id must be"),
        (b'{"method": "m", "params": {"x": NaN}}', -32700, "NaN is not a JSON value"),
        (b'{"method": "m", "params": [Infinity]}', -32700, "Infinity is not a JSON value"),
        (b'{"method": "m", "params": [-Infinity]}', -32700, "-Infinity is not a JSON value"),
        (b'{"method": "m", "params": [1e999]}', -32700, "1e999 is not a JSON value"),
        (b'{"method": "m", "params": [-1E400]}', -32700, "-1E400 is not a JSON value"),
        (b'{"method": "m", "params": ' + b"[" * 65 + b"]" * 65 + b"}", -32600, "Nesting"),
    ],
)
def test_what_is_refused_with_which_json_rpc_code(line: bytes, code: int, detail: str) -> None:
    got_code, got_detail = _refusal(FrameCheck().check(line))
    assert got_code == code
    assert detail.lower() in got_detail.lower()


def test_nesting_up_to_the_json_streams_bound_is_served() -> None:
    line = b'{"method": "m", "params": {"a": ' + b"[" * 62 + b"]" * 62 + b"}}"  # 64 levels
    assert FrameCheck().check(line).deliver != ()


def test_floats_that_are_finite_are_served() -> None:
    line = b'{"method": "m", "params": [1.5, -2e300, 0.0]}'
    assert FrameCheck().check(line).deliver[0]["params"] == [1.5, -2e300, 0.0]


def test_only_requests_with_a_valid_id_are_waited_for() -> None:
    check = FrameCheck()
    check.sent({"jsonrpc": "2.0", "method": "session/update", "params": {}})  # notification
    check.sent({"jsonrpc": "2.0", "id": None, "method": "m"})
    check.sent({"jsonrpc": "2.0", "id": True, "method": "m"})
    check.sent({"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "m"}})  # a response
    check.sent({"jsonrpc": "2.0", "id": 5, "method": 5})
    assert check.pending == {}
    check.sent({"jsonrpc": "2.0", "id": 6, "method": "fs/read_text_file"})
    check.sent({"jsonrpc": "2.0", "id": "s", "method": "terminal/output"})
    assert check.pending == {6: "fs/read_text_file", "s": "terminal/output"}


@pytest.mark.parametrize(
    "answer",
    [
        {"jsonrpc": "2.0", "id": 0, "result": ALLOW},
        {"jsonrpc": "2.0", "id": 0, "result": None},
        {"jsonrpc": "2.0", "id": 0, "error": {"code": -1, "message": "no", "data": [1]}},
    ],
)
def test_a_well_formed_answer_to_a_pending_request_goes_to_the_library(answer: Any) -> None:
    check = _waiting("session/request_permission")
    assert check.check(_line(answer)) == Verdict(deliver=(answer,))
    assert check.pending == {}
    # the same answer again answers nothing now
    assert check.check(_line(answer)).deliver == ()


@pytest.mark.parametrize("shape", sorted(malformed_answers(0)))
def test_a_malformed_answer_fails_its_request_and_is_named(shape: str) -> None:
    check = _waiting("session/request_permission", "fs/read_text_file")
    verdict = check.check(malformed_answers(0)[shape])
    assert verdict.reply is None
    [failure] = verdict.deliver
    assert failure["id"] == 0 and failure["jsonrpc"] == "2.0" and "result" not in failure
    error = failure["error"]
    assert type(error["code"]) is int and error["data"] == {"code": RESPONSE_INVALID}
    assert error["message"].startswith(
        "the client's answer to session/request_permission is malformed: "
    )
    assert verdict.note == f"dropped: {error['message']}"
    assert check.pending == {1: "fs/read_text_file"}  # the other one still waits


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"error": "boom"}, "error must be an object, not str"),
        ({"error": {"code": True, "message": "m"}}, "error.code must be an integer"),
        ({"error": {"code": 1}}, "error.message must be a string"),
        ({"result": 1, "error": {"code": 1, "message": "m"}}, "exactly one of result and error"),
        ({}, "exactly one of result and error"),
    ],
)
def test_what_makes_an_answer_malformed(answer: dict[str, Any], why: str) -> None:
    verdict = _waiting("m").check(_line({"jsonrpc": "2.0", "id": 0, **answer}))
    assert verdict.note is not None and verdict.note.endswith(why)


def test_answers_to_nothing_pending_are_named_and_dropped() -> None:
    check = _waiting("m")
    for request_id, named in [(7, "7"), ("0", "'0'"), ("x" * 500, "'" + "x" * 119 + "...")]:
        verdict = check.check(_line({"jsonrpc": "2.0", "id": request_id, "result": {}}))
        assert verdict == Verdict(note=f"dropped a response to no pending request (id {named})")
    assert check.pending == {0: "m"}


@pytest.mark.parametrize(
    ("error", "said"),
    [
        ({"code": -32700, "message": "cannot parse"}, "'cannot parse'"),
        ("plain", "'plain'"),
        ({"code": 1}, "None"),
    ],
)
def test_an_error_with_a_null_id_is_named_not_answered(error: Any, said: str) -> None:
    check = _waiting("m")
    verdict = check.check(_line({"jsonrpc": "2.0", "id": None, "error": error}))
    assert verdict == Verdict(note=f"the client reported an error: {said}")
    assert check.pending == {0: "m"}


def test_a_line_over_the_limit_fails_every_pending_request() -> None:
    check = _waiting("session/request_permission", "fs/read_text_file", "terminal/output")
    verdict = check.too_long("Line too long: 20000000 bytes")
    assert verdict.reply is not None and verdict.reply["id"] is None
    assert verdict.reply["error"]["code"] == -32600
    assert verdict.reply["error"]["data"] == {"details": "Line too long: 20000000 bytes"}
    assert [f["id"] for f in verdict.deliver] == [0, 1, 2]
    for failure in verdict.deliver:
        assert failure["error"]["data"] == {"code": RESPONSE_TOO_LARGE}
        assert failure["error"]["message"] == "the client's answer is over 16777216 bytes"
    assert verdict.note == "the client's answer is over 16777216 bytes: failed 3 pending request(s)"
    assert check.pending == {}
    again = check.too_long("Line too long")
    assert again.deliver == () and again.note is None and again.reply is not None


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)
_keys = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
_frames = st.dictionaries(_keys, _json, max_size=5) | _json


@settings(max_examples=400, deadline=None)
@given(frame=_frames, pending=st.lists(st.sampled_from(["fs/read_text_file", "m"]), max_size=3))
def test_any_json_gets_a_verdict_and_only_well_formed_messages_go_on(
    frame: Any, pending: list[str]
) -> None:
    check = _waiting(*pending)
    line = json.dumps(frame).encode()  # NaN and Infinity included, as Python writes them
    verdict = check.check(line)
    if verdict.reply is not None:
        strict_json(encode(verdict.reply))
        assert verdict.deliver == ()
    for message in verdict.deliver:
        strict_json(encode(message))
        assert isinstance(message, dict)
        if "method" in message:
            assert isinstance(message["method"], str)
        else:
            assert ("result" in message) != ("error" in message)
            assert message["id"] in range(len(pending))
            error = message.get("error")
            assert error is None or (
                type(error["code"]) is int and isinstance(error["message"], str)
            )
        request_id = message.get("id")
        assert request_id is None or type(request_id) in (int, str)


def test_the_writer_puts_null_for_non_finite_floats_and_escapes_lone_surrogates() -> None:
    message = {"id": 1, "result": {"n": float("nan"), "i": [float("inf"), -float("inf")]}}
    assert strict_json(encode(message)) == {"id": 1, "result": {"n": None, "i": [None, None]}}
    plain = encode({"id": 1, "result": {"x": 1.5, "name": "caf\u00e9"}})
    assert plain == '{"id":1,"result":{"x":1.5,"name":"café"}}\n'.encode()
    odd = encode({"path": "a\udcffb"})
    assert odd == b'{"path":"a\\udcffb"}\n' and strict_json(odd) == {"path": "a\udcffb"}
