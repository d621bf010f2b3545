"""`flightdeck agent --json-stream` read without click (cli/chat/_agent_stream.py):
every command line the fast reader accepts gives exactly the values click
gives; everything else is left to click (None)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flightdeck.cli.chat._agent_stream import json_stream_flags
from flightdeck.cli.chat.agent import agent

_OPTIONS = [
    "--json-stream",
    "--acp",
    "--provider",
    "--model",
    "--max-tokens",
    "--max-turns",
    "--base-url",
    "--system-prompt",
    "--auto-approve",
    "--trust-workspace",
    "--workspace",
    "--session-id",
    "--resume",
    "--list-tools",
    "--format",
    "--help",
    "-h",
    "--",
    "--bogus",
]
_VALUES = st.one_of(
    st.sampled_from(["", "7", "007", "-3", "1_0", " 5", "٣", "x", "--model", "a=b", "json"]),
    st.text(max_size=12),
)
_TOKEN = st.one_of(
    st.sampled_from(_OPTIONS),
    _VALUES,
    st.builds(lambda o, v: f"{o}={v}", st.sampled_from(_OPTIONS), _VALUES),
)


def _click(args: list[str]) -> dict[str, object]:
    with agent.make_context("agent", list(args)) as ctx:
        return dict(ctx.params)


def _same_as_click(args: list[str]) -> None:
    fast = json_stream_flags(args)
    if fast is None:
        return
    params = _click(args)
    assert params.pop("json_stream") is True
    assert (params.pop("acp"), params.pop("list_tools"), params.pop("fmt")) == (
        False,
        False,
        "text",
    )
    assert fast == params


@given(st.lists(_TOKEN, max_size=8))
def test_accepted_lines_read_as_click_reads_them(args: list[str]) -> None:
    _same_as_click(args)


def test_the_usual_lines_are_accepted() -> None:
    lines = [
        ["--json-stream"],
        ["--json-stream", "--provider", "openai", "--base-url", "http://h/v1", "--max-turns", "3"],
        ["--workspace=/w", "--json-stream", "--resume", "latest", "--auto-approve"],
        ["--json-stream", "--session-id", "abc", "--max-tokens", "4096", "--model", "m x"],
    ]
    for args in lines:
        fast = json_stream_flags(args)
        assert fast is not None
        assert fast == {k: v for k, v in _click(args).items() if k in fast}


def test_the_rest_is_left_to_click() -> None:
    for args in (
        [],
        ["--acp"],
        ["--json-stream", "--acp"],
        ["--json-stream", "--help"],
        ["--json-stream", "--list-tools"],
        ["--json-stream", "--max-turns", "x"],
        ["--json-stream", "--max-turns"],
        ["--json-stream", "--model", "a", "--model", "b"],
        ["--json-stream", "--json-stream"],
        ["--json-stream=1"],
        ["--json-stream", "--format", "json"],
        ["--json-stream", "extra"],
    ):
        assert json_stream_flags(args) is None, args


_VALUE_OPTIONS = st.sampled_from(
    [
        "--provider",
        "--model",
        "--max-tokens",
        "--max-turns",
        "--base-url",
        "--system-prompt",
        "--workspace",
        "--session-id",
        "--resume",
    ]
)
_PAIR = st.one_of(
    st.tuples(_VALUE_OPTIONS, _VALUES).map(list),
    st.tuples(_VALUE_OPTIONS, _VALUES).map(lambda p: [f"{p[0]}={p[1]}"]),
    st.just(["--auto-approve"]),
)


@given(st.lists(_PAIR, max_size=6), st.integers(0, 6))
def test_well_formed_lines_read_as_click_reads_them(pairs: list[list[str]], at: int) -> None:
    pairs.insert(min(at, len(pairs)), ["--json-stream"])
    args = [token for pair in pairs for token in pair]
    _same_as_click(args)
