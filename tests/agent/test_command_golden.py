"""The msgspec command reader decides every recorded line as the pydantic
reader did: the same lines accepted with the same field values, the same lines
refused with the same `protocol_error` message and `msg_id`
(tests/data/agent/command_decisions.json.gz, written by
tests/agent/_command_golden.py from the pydantic models before they went)."""

from __future__ import annotations

import json
from typing import Any

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


def _lax_budget(line: str) -> bool:
    """A line whose `thinking_budget` pydantic's lax mode read as an integer
    (`true`, `5.0`, "5"): the one intended change, tested below."""
    try:
        data = json.loads(line)
    except ValueError:
        return False
    if not isinstance(data, dict) or "thinking_budget" not in data:
        return False
    budget = data["thinking_budget"]
    return budget is not None and (isinstance(budget, bool) or not isinstance(budget, int))


@pytest.mark.parametrize("start", range(0, len(DECISIONS), 500))
def test_read_command_decides_each_line_as_recorded(start: int) -> None:
    for recorded in DECISIONS[start : start + 500]:
        line = recorded["line"]
        if _lax_budget(line):
            continue
        now = decide(line)
        expected = {k: v for k, v in recorded.items() if k != "line"}
        assert _plain(now) == expected, line[:300]


def test_the_golden_file_has_lax_budgets_it_no_longer_takes() -> None:
    lax = [d for d in DECISIONS if _lax_budget(d["line"])]
    assert any("command" in d for d in lax)  # pydantic accepted some of them
    for recorded in lax:
        now = read_command(recorded["line"])
        assert isinstance(now, ProtocolProblem), recorded["line"]


_BUDGETS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.from_regex(r"\s*[+-]?[0-9_]{0,6}(\.[0-9]{0,2})?\s*", fullmatch=True),
    st.text(max_size=6),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(_BUDGETS)
def test_thinking_budget_is_a_json_integer(budget: Any) -> None:
    """`set_config`'s `thinking_budget` is a non-negative JSON integer or null;
    anything else is a located protocol error (pydantic's lax mode also took
    `true`, `5.0` and "5": docs/decisions.md)."""
    line = json.dumps({"type": "set_config", "thinking_budget": budget})
    now = read_command(line)
    if budget is None or (type(budget) is int and budget >= 0):
        assert isinstance(now, SetConfigCommand) and now.thinking_budget == budget
    else:
        assert isinstance(now, ProtocolProblem)
        wording = (
            "Input should be greater than or equal to 0"
            if type(budget) is int
            else "Input should be a valid integer"
        )
        assert now.message == f"Invalid set_config command: thinking_budget: {wording}"
