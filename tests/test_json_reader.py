"""The one bounded JSON reader (`flightdeck._json`): what it reads equals
what Python's decoder reads, within its bounds; beyond them it is one
`JsonError` with a reason, never a `RecursionError`; and no other module of
flightdeck decodes JSON itself."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck._json import DEFAULT_DEPTH, JsonError, json_copy, nesting_problem, read_json

SRC = Path(__file__).resolve().parents[1] / "src" / "flightdeck"

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"])),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(value=_values, as_bytes=st.booleans())
def test_it_reads_what_json_wrote(value: Any, as_bytes: bool) -> None:
    text = json.dumps(value, ensure_ascii=False)
    data = text.encode("utf-8") if as_bytes else text
    assert read_json(data) == value


@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=64) | st.text(alphabet='[]{}"\\,:0 1aeNInfy-.', max_size=64))
def test_it_agrees_with_the_decoder_or_refuses_where_it_would(data: bytes | str) -> None:
    """Differential: any input the decoder reads, the reader reads the same;
    anything the decoder refuses, the reader refuses with JsonError."""
    try:
        expected: Any = json.loads(data)
    except (ValueError, RecursionError):
        with pytest.raises(JsonError):
            read_json(data)
        return
    got = read_json(data)
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == expected


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_deep_nesting_is_refused_before_the_decoder_recurses(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    deep = opener * 100_000 + "1" + closer * 100_000
    with pytest.raises(JsonError) as caught:
        read_json(deep)
    assert caught.value.reason == "too_deep" and "Nesting too deep" in str(caught.value)
    fits = opener * DEFAULT_DEPTH + "1" + closer * DEFAULT_DEPTH
    assert read_json(fits) is not None
    with pytest.raises(JsonError):
        read_json(opener * (DEFAULT_DEPTH + 1) + "1" + closer * (DEFAULT_DEPTH + 1))


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps(["[" * 10_000, "{" * 10_000, '\\"[[['])
    assert read_json(text, depth=2) == ["[" * 10_000, "{" * 10_000, '\\"[[[']
    assert nesting_problem(text.encode(), 1) is None


def test_the_size_limit_is_checked_before_decoding() -> None:
    with pytest.raises(JsonError) as caught:
        read_json(b"[" + b"1," * 100 + b"1]", limit=50)
    assert caught.value.reason == "too_large"
    assert read_json(b"[1]", limit=3) == [1]


def test_the_decoder_s_hooks_pass_through() -> None:
    odd: list[str] = []
    value = read_json(
        '{"a": [NaN, 1e999, 2.5]}',
        parse_constant=lambda name: odd.append(name),
        parse_float=lambda text: odd.append(text) or float(text),
    )
    assert odd == ["NaN", "1e999", "2.5"] and value["a"][0] is None


def test_without_a_depth_the_decoder_s_guard_is_the_bound() -> None:
    """Values flightdeck encoded itself are read as deep as its encoder
    wrote them; past the interpreter's limit it is still one JsonError."""
    deep = [[[[]]]]
    for _ in range(400):
        deep = [deep]
    assert read_json(json.dumps(deep), depth=None) == deep
    with pytest.raises(JsonError):
        read_json(json.dumps(deep))
    with pytest.raises(JsonError) as caught:
        read_json("[" * 100_000 + "]" * 100_000, depth=None)
    assert caught.value.reason == "too_deep"


def test_syntax_errors_keep_the_decoder_s_message_and_position() -> None:
    with pytest.raises(JsonError) as caught:
        read_json('{"a": 1,\n "b": }')
    problem = caught.value
    assert problem.reason == "syntax" and (problem.line, problem.column) == (2, 7)
    assert str(problem).startswith("Expecting value")
    with pytest.raises(JsonError) as caught:
        read_json(b'["\xff"]')
    assert caught.value.reason == "not_utf8"
    with pytest.raises(JsonError) as caught:
        read_json("[1, 2")
    assert caught.value.reason == "syntax"


def test_an_integer_too_long_to_convert_is_a_json_error() -> None:
    with pytest.raises(JsonError) as caught:
        read_json('{"n": ' + "9" * 10_000 + "}")
    assert caught.value.reason == "syntax" and "digits" in str(caught.value)


def test_json_copy_is_plain_data() -> None:
    value = {"a": (1, 2), "b": {"c": Path("/x")}}
    assert json_copy(value, default=str) == {"a": [1, 2], "b": {"c": "/x"}}


def _decodes_json(node: ast.AST) -> bool:
    """`json.loads(...)` / `json.load(...)`, or a bare `loads(...)` imported
    from json."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("loads", "load")
        and (isinstance(func.value, ast.Name) and func.value.id == "json")
    )


# Modules that decode JSON themselves, and why.
ALLOWED = {
    # The Anthropic fast path decodes an event as the SDK does, exception
    # types included (tests/llm/test_anthropic_express.py compares both).
    "llm/_anthropic_express.py": 1,
}


def test_no_other_module_decodes_json() -> None:
    """Every JSON text from outside is read through `flightdeck._json`, so
    its bounds hold everywhere; `json` is for writing."""
    found: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "_json.py":
            continue
        calls = [
            node for node in ast.walk(ast.parse(path.read_text("utf-8"))) if _decodes_json(node)
        ]
        if len(calls) == ALLOWED.get(str(path.relative_to(SRC)), -1):
            continue
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if _decodes_json(node):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")  # type: ignore[attr-defined]
            if isinstance(node, ast.ImportFrom) and node.module == "json":
                names = {alias.name for alias in node.names}
                if names & {"loads", "load", "JSONDecoder"}:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno} imports a decoder")
    assert found == []
