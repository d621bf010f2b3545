from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from flightdeck.flightplan import read_plan
from flightdeck.launch import LaunchError, resolve_inputs

CLOCK = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


def _plan(inputs: list[dict[str, Any]]) -> Any:
    return read_plan({"name": "p", "aileron": {"inputs": inputs, "outputs": []}})


def _literal(name: str, kind: str, **rule: Any) -> dict[str, Any]:
    return {"name": name, "type": kind, "resolution": {"rule": "literal", **rule}}


def _resolve(plan: Any, given: dict[str, Any], **kw: Any) -> Any:
    return asyncio.run(resolve_inputs(plan, given, clock=lambda: CLOCK, **kw))


def test_literal_inputs_are_typed_per_type() -> None:
    """Issue 6: literal from --input typed per the input's type, default when absent."""
    plan = _plan(
        [
            _literal("n", "number"),
            _literal("f", "number"),
            _literal("b", "boolean"),
            _literal("t", "timestamp"),
            _literal("o", "object"),
            _literal("a", "array"),
            _literal("s", "string"),
            _literal("d", "number", default=7),
        ]
    )
    given = {
        "n": "30",
        "f": "2.5",
        "b": "yes",
        "t": "2025-01-01T00:00:00Z",
        "o": '{"k": 1}',
        "a": "[1, 2]",
        "s": "hello",
    }
    values = _resolve(plan, given).values
    assert values == {
        "n": 30,
        "f": 2.5,
        "b": True,
        "t": "2025-01-01T00:00:00Z",
        "o": {"k": 1},
        "a": [1, 2],
        "s": "hello",
        "d": 7,
    }


@pytest.mark.parametrize(
    ("kind", "raw"),
    [
        ("number", "thirty"),
        ("boolean", "maybe"),
        ("timestamp", "2025-01-01T00:00:00"),
        ("object", "[1]"),
        ("array", "{}"),
        ("number", "nan"),
    ],
)
def test_literal_of_wrong_type_names_the_input(kind: str, raw: str) -> None:
    with pytest.raises(LaunchError) as caught:
        _resolve(_plan([_literal("x", kind)]), {"x": raw})
    assert caught.value.code == "input.invalid" and "'x'" in caught.value.message


def test_missing_inputs_are_all_named() -> None:
    """Issue 6: missing literal inputs, not on a terminal: an error naming them."""
    plan = _plan(
        [_literal("a", "string"), _literal("b", "number"), _literal("c", "string", default="x")]
    )
    with pytest.raises(LaunchError) as caught:
        _resolve(plan, {})
    assert caught.value.code == "input.missing"
    assert "a, b" in caught.value.message


def test_missing_inputs_are_prompted_on_a_terminal() -> None:
    asked: list[str] = []
    plan = _plan([_literal("a", "number")])
    values = _resolve(plan, {}, prompt=lambda item: asked.append(item.name) or "5").values
    assert values == {"a": 5} and asked == ["a"]


def test_unknown_input_is_refused() -> None:
    with pytest.raises(LaunchError) as caught:
        _resolve(_plan([_literal("a", "string")]), {"a": "1", "zz": "2"})
    assert caught.value.code == "input.unknown" and "zz" in caught.value.message


def test_dynamic_now_and_today_from_one_clock_read() -> None:
    """Seed 003: two steps reading a moving value see one resolved value (one clock read)."""
    reads: list[int] = []

    def clock() -> datetime:
        reads.append(1)
        return CLOCK.replace(second=len(reads))

    plan = _plan(
        [
            {
                "name": "now1",
                "type": "timestamp",
                "resolution": {"rule": "dynamic", "value": "now"},
            },
            {
                "name": "now2",
                "type": "timestamp",
                "resolution": {"rule": "dynamic", "value": "now"},
            },
            {"name": "day", "type": "string", "resolution": {"rule": "dynamic", "value": "today"}},
        ]
    )
    resolved = asyncio.run(resolve_inputs(plan, {}, clock=clock))
    assert len(reads) == 1
    assert resolved.values == {
        "now1": "2025-03-04T05:06:01Z",
        "now2": "2025-03-04T05:06:01Z",
        "day": "2025-03-04",
    }
    assert resolved.launch_time == "2025-03-04T05:06:01Z"


def test_source_input_one_call_and_select() -> None:
    """Seed 003: source by one action call whose result goes through select."""
    calls: list[str] = []

    async def read(item: Any) -> Any:
        calls.append(item.name)
        return {"series": [{"name": "a"}, {"name": "b"}]}

    plan = _plan(
        [
            {
                "name": "m",
                "type": "array",
                "resolution": {
                    "rule": "source",
                    "source": {"actionRef": "aileron:m.list", "select": "series[].name"},
                },
            }
        ]
    )
    resolved = asyncio.run(resolve_inputs(plan, {}, clock=lambda: CLOCK, read_source=read))
    assert resolved.values == {"m": ["a", "b"]} and calls == ["m"]
    read_record = resolved.source_reads[0]
    assert read_record["action_ref"] == "aileron:m.list"
    assert read_record["result_hash"].startswith("sha256:")
