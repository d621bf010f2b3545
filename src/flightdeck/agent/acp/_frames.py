"""What a client's line may be before the `acp` library sees it.

The client controls every byte of stdin, and the library trusts what it is
handed: it calls `.get` on a response's `error` whatever its type (a string
there ended its receive loop, and the process with it), matches response ids
by equality (`true == 1` in Python), and its `json.loads` accepts `NaN` and
`Infinity`, which it may later echo into a line that is not JSON. So each
line is judged here, and the library only ever sees JSON-RPC 2.0 messages of
the right shape (docs/acp.md, "Errors on the wire"):

- a request or notification: a string `method`, an id that is a string, an
  integer or null (never a boolean), strict JSON nested at most as deep as
  the JSON stream allows (`protocol/_limits.py`'s `MAX_DEPTH`);
- a response: the id of a request the agent sent and has not seen answered,
  exactly one of `result` and `error`, an `error` an object with an integer
  `code` and a string `message`.

A bad request is answered with JSON-RPC's code and a null id. A bad response
cannot be answered (a response to a response would start a loop): it is
named on stderr, and when it was meant for a pending request, that request
is failed with an error in place of the answer, so nothing waits for a
reply that will never come. A line over the length limit is never read, so
which request it answered cannot be known: every pending request fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flightdeck._json import JsonError, read_json
from flightdeck.agent.protocol._limits import MAX_LINE_BYTES, line_problem

# `error.data.code` of the error put in place of a client's answer.
RESPONSE_INVALID = "acp.response_invalid"
RESPONSE_TOO_LARGE = "acp.response_too_large"
# How much of a client's value a diagnostic quotes.
_QUOTE = 120


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with one line: messages for the library, an error response
    for the client, a diagnostic for stderr (any of them, or none)."""

    deliver: tuple[dict[str, Any], ...] = ()
    reply: dict[str, Any] | None = None
    note: str | None = None


def error_response(code: int, message: str, detail: str) -> dict[str, Any]:
    """A JSON-RPC error with a null id (the request's id cannot be trusted)."""
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": message, "data": {"details": detail}},
    }


def _refuse(code: int, detail: str) -> Verdict:
    message = "Parse error" if code == -32700 else "Invalid request"
    return Verdict(reply=error_response(code, message, detail))


def _quote(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _QUOTE else text[:_QUOTE] + "..."


def valid_id(value: Any) -> bool:
    """JSON-RPC ids are strings, numbers without fractions, or null; a
    boolean is none of these (and would equal the ids 1 and 0 in Python)."""
    return value is None or isinstance(value, str) or type(value) is int


def parse(line: bytes) -> tuple[Any, str | None]:
    """The line's value, and which non-standard constant it used, if any
    (`NaN`, `Infinity`, `-Infinity`, or a number too large for a float).
    Raises JsonError (the decoder's guard bounds the depth: `check` then
    measures it against the JSON stream's limit)."""
    odd: list[str] = []

    def constant(name: str) -> None:
        odd.append(name)

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            odd.append(text[:_QUOTE])
        return value

    value = read_json(line, depth=None, parse_constant=constant, parse_float=number)
    return value, (f"{odd[0]} is not a JSON value" if odd else None)


def response_problem(message: dict[str, Any]) -> str | None:
    """Why a response to a pending request is malformed, or None."""
    if ("result" in message) == ("error" in message):
        return "a response needs exactly one of result and error"
    if "error" not in message:
        return None
    error = message["error"]
    if not isinstance(error, dict):
        return f"error must be an object, not {type(error).__name__}"
    if type(error.get("code")) is not int:
        return "error.code must be an integer"
    if not isinstance(error.get("message"), str):
        return "error.message must be a string"
    return None


def failed(request_id: int | str, why: str, code: str = RESPONSE_INVALID) -> dict[str, Any]:
    """The error response the library gets in place of the client's answer."""
    error = {"code": -32600, "message": why, "data": {"code": code}}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class FrameCheck:
    """Judges each line against the requests the agent has sent and that
    are still unanswered (`sent` is told of every request written)."""

    def __init__(self) -> None:
        self.pending: dict[int | str, str] = {}  # request id -> method

    def sent(self, message: dict[str, Any]) -> None:
        method, request_id = message.get("method"), message.get("id")
        if isinstance(method, str) and request_id is not None and valid_id(request_id):
            self.pending[request_id] = method

    def check(self, line: bytes) -> Verdict:
        try:
            value, odd = parse(line)
        except JsonError as exc:
            return _refuse(-32700, str(exc))
        if not isinstance(value, dict):
            return _refuse(-32600, "a message must be a JSON object")
        deep = line_problem(line)  # only its depth: stdin lines are bounded already
        if "method" in value:
            if odd is not None:
                return _refuse(-32700, odd)
            if deep is not None:
                return _refuse(-32600, deep)
            if not isinstance(value["method"], str):
                return _refuse(-32600, "method must be a string")
            if "id" in value and not valid_id(value["id"]):
                return _refuse(-32600, "id must be a string, an integer or null")
            return Verdict(deliver=(value,))
        if "id" not in value:
            return _refuse(-32600, "neither a request nor a response")
        if not valid_id(value["id"]):
            return _refuse(-32600, "id must be a string, an integer or null")
        return self._response(value, odd or deep)

    def _response(self, message: dict[str, Any], problem: str | None) -> Verdict:
        request_id = message["id"]
        if request_id is None:  # the client could not read something the agent sent
            error = message.get("error")
            said = error.get("message") if isinstance(error, dict) else error
            return Verdict(note=f"the client reported an error: {_quote(said)}")
        method = self.pending.pop(request_id, None)
        if method is None:
            unknown = _quote(request_id)
            return Verdict(note=f"dropped a response to no pending request (id {unknown})")
        problem = problem or response_problem(message)
        if problem is None:
            return Verdict(deliver=(message,))
        why = f"the client's answer to {method} is malformed: {problem}"
        return Verdict(deliver=(failed(request_id, why),), note=f"dropped: {why}")

    def too_long(self, detail: str) -> Verdict:
        """A line over the limit, skipped unread: it is refused, and since
        which request it may have answered cannot be known, every pending
        request fails (a Read then asks for less: `_client_fs`)."""
        why = f"the client's answer is over {MAX_LINE_BYTES} bytes"
        failures = tuple(failed(rid, why, RESPONSE_TOO_LARGE) for rid in self.pending)
        note = f"{why}: failed {len(failures)} pending request(s)" if failures else None
        self.pending.clear()
        reply = error_response(-32600, "Invalid request", detail)
        return Verdict(deliver=failures, reply=reply, note=note)


__all__ = [
    "RESPONSE_INVALID",
    "RESPONSE_TOO_LARGE",
    "FrameCheck",
    "Verdict",
    "error_response",
]
