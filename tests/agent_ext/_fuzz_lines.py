"""Malformed protocol lines, generated deterministically from a seed.

Each line is a structure-aware mutation of a valid command (deep nesting,
truncation, byte flips, wrong types, unknown fields, oversized fields, bad
UTF-8, huge numbers) or random bytes. Only lines that `read_command` refuses
are kept, so a client sending them must see exactly one `protocol_error`
each. Used by tests/agent_ext/test_protocol_fuzz.py and scripts/fuzz_protocol.py.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

from flightdeck.agent.protocol import ProtocolProblem, read_command

VALID: list[dict[str, object]] = [
    {"type": "message", "msg_id": "m1", "input": "hello"},
    {"type": "message", "msg_id": "m2", "content": "hello", "files": ["a.txt"]},
    {"type": "stop"},
    {"type": "tool_approve", "call_id": "c1", "scope": "always"},
    {"type": "tool_deny", "call_id": "c1", "reason": "no"},
    {"type": "init_history", "text": "earlier"},
    {"type": "set_mode", "mode": "yolo"},
    {"type": "ping"},
    {"type": "set_config", "model": "m", "thinking": "enabled", "thinking_budget": 2048},
    {"type": "add_mcp_server", "name": "n", "transport": "stdio", "command": "x"},
]


def _dump(value: object) -> bytes:
    return json.dumps(value).encode()


def _deep(rng: random.Random) -> bytes:
    depth = 50_000 if rng.random() < 0.02 else rng.choice([65, 100, 1_000, 5_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    nested = opener * depth + "1" + closer * depth
    if rng.random() < 0.3:
        nested = opener * depth  # unbalanced as well as deep
    return f'{{"type":"message","msg_id":"d","input":{nested}}}'.encode()


def _truncated(rng: random.Random) -> bytes:
    line = _dump(rng.choice(VALID))
    return line[: rng.randrange(1, len(line))]


def _flipped(rng: random.Random) -> bytes:
    line = bytearray(_dump(rng.choice(VALID)))
    for _ in range(rng.randint(1, 4)):
        line[rng.randrange(len(line))] = rng.randrange(256)
    return bytes(line)


def _random_bytes(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))


_WRONG_VALUES: list[object] = [
    None,
    123,
    -1,
    1.5,
    True,
    [],
    {},
    [1, [2]],
    "x" * 2_000,
    {"nested": {"a": [1]}},
]


def _wrong_field(rng: random.Random) -> bytes:
    command = dict(rng.choice(VALID))
    keys = [k for k in command if k != "type"] or ["msg_id"]
    command[rng.choice(keys)] = rng.choice(_WRONG_VALUES)
    return _dump(command)


def _extra_field(rng: random.Random) -> bytes:
    command = dict(rng.choice(VALID))
    command[rng.choice(["extra", "inputs", "msgId", "__proto__", ""])] = 1
    return _dump(command)


def _bad_shape(rng: random.Random) -> bytes:
    return rng.choice(
        [
            b"null",
            b"42",
            b'"message"',
            b"[]",
            b"[{}]",
            b"{}",
            b'{"type":null}',
            b'{"type":"nope"}',
            b'{"type":["message"]}',
            b'{"msg_id":"m"}',
            b'{"type":"message","msg_id":"m","input":"a","content":"b"}',
            b'{"type":"message","msg_id":"m"}',
            b"{'type':'stop'}",
            b'{"type":"stop",}',
            b'{"type":"stop"} {"type":"stop"}',
            b'{"type":"message","msg_id":"m","input":"' + b"\xff\xfe" + b'"}',
            b'{"type":"message","msg_id":' + b"9" * 10_000 + b',"input":"x"}',
            b'{"type":"message","msg_id":"m","input":"x","files":' + _dump(["f"] * 300) + b"}",
            b'{"type":"set_config","thinking":"maybe"}',
            b'{"type":"set_config","compaction":"aggressive"}',
            b'{"type":"set_config","thinking_budget":-5}',
            b'{"type":"add_mcp_server","name":"n","transport":"carrier-pigeon"}',
            b"\xef\xbb\xbf",
            b"\x00",
        ]
    )


_MUTATORS: list[Callable[[random.Random], bytes]] = [
    _deep,
    _truncated,
    _flipped,
    _random_bytes,
    _wrong_field,
    _extra_field,
    _bad_shape,
]


def malformed_lines(count: int, seed: int = 0) -> Iterator[bytes]:
    """`count` lines that are each refused by `read_command` (no newline in any)."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        line = rng.choice(_MUTATORS)(rng).replace(b"\n", b" ")
        if not line.strip():
            continue  # blank lines are skipped by the agent, not answered
        if isinstance(read_command(line), ProtocolProblem):
            made += 1
            yield line
