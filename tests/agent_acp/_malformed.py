"""Malformed answers a client can give to a request of the agent's, as
lines: each must be dropped (named on stderr) and fail the request it was
meant for. Shared by tests/agent_acp/test_acp_frames.py and
scripts/fuzz_acp.py. Where the shape allows, the answer would grant a
permission request, so one taken as valid shows up as a tool that ran."""

from __future__ import annotations

import json
from typing import Any

ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
_ERROR = {"code": -32603, "message": "failed"}


def _line(request_id: Any, **fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, **fields}).encode()


def _with_meta(request_id: Any, meta: str) -> bytes:
    """An allowing result whose `_meta` is `meta`, verbatim (not JSON)."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": ALLOW})[:-2]
    return f'{head}, "_meta": {{"x": {meta}}}}}}}'.encode()


def malformed_answers(request_id: Any) -> dict[str, bytes]:
    """Name -> one line answering `request_id` malformed."""
    return {
        "error is a string": _line(request_id, error="boom"),
        "error is a number": _line(request_id, error=5),
        "error is a list": _line(request_id, error=[]),
        "error is null": _line(request_id, error=None),
        "error without code": _line(request_id, error={"message": "m"}),
        "error without message": _line(request_id, error={"code": 1}),
        "code is a string": _line(request_id, error={"code": "1", "message": "m"}),
        "code is a boolean": _line(request_id, error={"code": True, "message": "m"}),
        "code is a float": _line(request_id, error={"code": 1.5, "message": "m"}),
        "message is a number": _line(request_id, error={"code": 1, "message": 5}),
        "result and error": _line(request_id, result=ALLOW, error=_ERROR),
        "neither result nor error": _line(request_id),
        "NaN": _with_meta(request_id, "NaN"),
        "Infinity": _with_meta(request_id, "Infinity"),
        "-Infinity": _with_meta(request_id, "-Infinity"),
        "1e999": _with_meta(request_id, "1e999"),
        "nested 80 deep": _with_meta(request_id, "[" * 80 + "]" * 80),
    }


__all__ = ["ALLOW", "malformed_answers"]
