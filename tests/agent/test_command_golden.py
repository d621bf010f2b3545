"""The msgspec command reader decides every recorded line as the pydantic
reader did: the same lines accepted with the same field values, the same lines
refused with the same `protocol_error` message and `msg_id`
(tests/data/agent/command_decisions.json.gz, written by
tests/agent/_command_golden.py from the pydantic models before they went)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.agent.protocol import ProtocolProblem, SetConfigCommand, read_command
from tests.agent._command_golden import decide, lines, load

DECISIONS = load()


def test_the_golden_file_covers_every_kind_of_line() -> None:
    accepted = {d["command"] for d in DECISIONS if "command" in d}
    assert len(accepted) == 9  # every command type accepted somewhere
    problems = " ".join(d["problem"] for d in DECISIONS if "problem" in d)
    for kind in (
        "missing field msg_id",
        "unknown field",
        "String should have at most 1024 characters",
        "List should have at most 256 items",
        "files.0: String should have at most 4096 characters",
        "Input should be 'once' or 'always'",
        "Input should be a valid string",
        "missing field input (or content)",
        "input and content differ",
        "more than 1024 items",
    ):
        assert kind in problems, kind


def test_the_lines_are_those_the_generator_makes() -> None:
    # Derandomized hypothesis: the generator still makes the recorded lines,
    # so `python -m tests.agent._command_golden` rewrites the same cases.
    assert lines() == [d["line"] for d in DECISIONS]


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("start", range(0, len(DECISIONS), 500))
def test_read_command_decides_each_line_as_recorded(start: int) -> None:
    for recorded in DECISIONS[start : start + 500]:
        line = recorded["line"]
        now = decide(line)
        expected = {k: v for k, v in recorded.items() if k != "line"}
        assert _plain(now) == expected, line[:300]


_BUDGETS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.from_regex(r"\s*[+-]?[0-9_]{0,6}(\.[0-9]{0,2})?\s*", fullmatch=True),
    st.text(max_size=6),
    st.from_regex(r"\s{0,2}[0-9]{1,3}\s{0,2}", fullmatch=True),
    st.integers(4290, 4310).map(lambda n: "7" * n),
    st.none(),
)


@settings(max_examples=400, deadline=None)
@given(_BUDGETS)
def test_thinking_budget_reads_as_pydantic_read_it(budget: Any) -> None:
    """The one lax field: msgspec plus `lax_int` decides (and words) a budget
    as the pydantic model did (pydantic stays installed for the SDKs)."""
    from pydantic import Field, TypeAdapter, ValidationError

    adapter: TypeAdapter[int | None] = TypeAdapter(Annotated[int, Field(ge=0)] | None)
    line = json.dumps({"type": "set_config", "thinking_budget": budget})
    now = read_command(line)
    try:
        value = adapter.validate_python(json.loads(line)["thinking_budget"])
    except ValidationError as exc:
        assert isinstance(now, ProtocolProblem)
        wording = exc.errors()[0]["msg"]
        assert now.message == f"Invalid set_config command: thinking_budget: {wording}"
    else:
        assert isinstance(now, SetConfigCommand) and now.thinking_budget == value
