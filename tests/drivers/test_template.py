"""The args_template language (AIP-31 § Body templating, AIP-33 § Args templating)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.documents import Diagnostic
from flightdeck.drivers import DriverCallError
from flightdeck.drivers._template import compile_args, compile_value
from flightdeck.drivers._template_parse import (
    Default,
    Expr,
    Ref,
    TemplateSyntaxError,
    ToJson,
    format_expr,
    parse_string,
)

SCOPE: dict[str, Any] = {
    "input": {
        "prompt": "draw a cat",
        "n": 3,
        "opts": {"size": "big", "deep": {"x": [1, 2]}},
        "items": ["first", "second"],
        "flag": False,
        "nothing": None,
        "odd key": "spaced",
    },
    "secrets": {"API_KEY": "sk-123456"},
    "context": {"workspace": "/ws", "user": {"id": "u1"}},
}


def render(template: Any) -> Any:
    diags: list[Diagnostic] = []
    node = compile_value(template, "/t", diags)
    assert diags == []
    return node.render(SCOPE)


def problems(template: Any) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    compile_value(template, "/implements/0/metadata/sdk/args_template/x", diags)
    return diags


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${input.n}", 3),
        ("${input.opts}", {"size": "big", "deep": {"x": [1, 2]}}),
        ("${input.items}", ["first", "second"]),
        ("${input.flag}", False),
        ("${input.nothing}", None),
        ("${input.opts.deep.x[1]}", 2),
        ("${input.items[0]}", "first"),
        ("${input['odd key']}", "spaced"),
        ("${ input.prompt }", "draw a cat"),
    ],
)
def test_aip33_whole_string_reference_keeps_the_value_type(template: str, expected: Any) -> None:
    assert render(template) == expected


def test_aip31_mixed_text_renders_a_string_with_json_for_non_strings() -> None:
    assert render("n=${input.n} p=${input.prompt} f=${input.flag}") == "n=3 p=draw a cat f=false"
    assert render("o=${input.opts.deep}") == 'o={"x": [1, 2]}'


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${input.missing | default(4096)}", 4096),
        ("${input.missing | default('x')}", "x"),
        ('${input.missing | default("dq")}', "dq"),
        ("${input.missing | default(true)}", True),
        ("${input.missing | default(false)}", False),
        ("${input.missing | default(null)}", None),
        ("${input.missing | default(1.5)}", 1.5),
        ("${input.missing | default(-3)}", -3),
        ("${input.missing | default(2e3)}", 2000.0),
        ("${input.nothing | default('was null')}", "was null"),
        ("${input.n | default(9)}", 3),
        ("${input.missing | default('it\\'s')}", "it's"),
    ],
)
def test_aip31_default_pipe_takes_typed_literals(template: str, expected: Any) -> None:
    value = render(template)
    assert value == expected
    assert type(value) is type(expected)


def test_aip31_json_pipe_forces_json_stringify() -> None:
    assert render("${input.opts | json}") == '{"size": "big", "deep": {"x": [1, 2]}}'
    assert render("${input.prompt | json}") == '"draw a cat"'
    assert render("${input.missing | default(5) | json}") == "5"


def test_aip31_templates_nest_through_objects_and_arrays() -> None:
    template = {
        "model": "dall-e-3",
        "size": "${input.opts.size}",
        "list": ["${input.n}", {"deep": "${context.user.id}"}, 7, True, None],
        "ws": "${context.workspace}",
    }
    assert render(template) == {
        "model": "dall-e-3",
        "size": "big",
        "list": [3, {"deep": "u1"}, 7, True, None],
        "ws": "/ws",
    }


def test_aip31_secrets_and_context_roots() -> None:
    assert render("Bearer ${secrets.API_KEY}") == "Bearer sk-123456"
    assert render("${context.workspace}") == "/ws"


def test_dollar_dollar_brace_is_a_literal_and_lone_dollars_are_text() -> None:
    assert render("$${input.n} costs $5") == "${input.n} costs $5"


def test_missing_value_without_default_is_template_error_naming_the_path() -> None:
    diags: list[Diagnostic] = []
    node = compile_value({"a": "${input.opts.nope}"}, "/args", diags)
    with pytest.raises(DriverCallError) as info:
        node.render(SCOPE)
    assert info.value.code == "template_error"
    assert "input.opts.nope" in info.value.message
    assert info.value.pointer == "/args/a"
    assert "sk-123456" not in str(info.value)


def test_index_out_of_range_is_missing_not_empty_string() -> None:
    node = compile_value("x${input.items[5]}", "/t", [])
    with pytest.raises(DriverCallError, match=r"input\.items\[5\]"):
        node.render(SCOPE)


@pytest.mark.parametrize(
    ("template", "column", "fragment"),
    [
        ("${input.a", 10, "missing `}`"),
        ("${inpt.a}", 3, "unknown root"),
        ("${input.a | upper}", 13, "unknown filter"),
        ("${input.a | default(x)}", 21, "expected a literal"),
        ("${input.a | default('x'}", 24, "expected `)`"),
        ("${input.}", 9, "field name"),
        ("${input[-1]}", 9, "negative index"),
        ("${input.a b}", 11, "expected `|` or `}`"),
        ("${secrets}", 3, "secrets.NAME"),
        ("${input.a | default('open)}", 21, "unterminated string"),
        ("${input.a ! }", 11, "unexpected character"),
    ],
)
def test_syntax_errors_are_located_template_errors(
    template: str, column: int, fragment: str
) -> None:
    diags = problems({"x": template})
    assert len(diags) == 1
    assert diags[0].code == "template_error"
    assert diags[0].pointer == "/implements/0/metadata/sdk/args_template/x/x"
    assert f"column {column} " in diags[0].message
    assert fragment in diags[0].message


def test_every_syntax_error_is_reported_not_just_the_first() -> None:
    diags = problems({"a": "${bad.x}", "b": ["${input.", "ok"], "c": "${input.a | nope}"})
    assert [d.pointer.rsplit("/", 2)[-2:] for d in diags] == [["x", "a"], ["b", "0"], ["x", "c"]]


def test_positional_arguments_mixed_with_keywords() -> None:
    diags: list[Diagnostic] = []
    args = compile_args(
        {
            "_1": {"model": "${input.missing | default('llama')}", "t": 0.7},
            "_0": "${input.prompt}",
            "stop": "${input.items}",
        },
        "/a",
        diags,
    )
    assert diags == []
    assert args.render(SCOPE) == (
        ["draw a cat", {"model": "llama", "t": 0.7}],
        {"stop": ["first", "second"]},
    )


def test_positional_gap_is_a_registration_error() -> None:
    diags: list[Diagnostic] = []
    compile_args({"_0": "a", "_2": "c"}, "/a", diags)
    assert [d.code for d in diags] == ["template_error"]
    assert "_1 is missing" in diags[0].message


# ---- property tests -------------------------------------------------------------

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: n not in ("true", "false", "null")
)
segments = st.one_of(names, st.integers(0, 50), st.text(max_size=5))
literals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**9), 10**9),
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f != int(f)),
    st.text(max_size=8),
)
filters = st.lists(st.one_of(st.just(ToJson()), literals.map(Default)), max_size=3)


@st.composite
def exprs(draw: st.DrawFn) -> Expr:
    root = draw(st.sampled_from(["input", "context", "secrets"]))
    path: tuple[str | int, ...] = (
        (draw(names),) if root == "secrets" else tuple(draw(st.lists(segments, max_size=4)))
    )
    return Expr(Ref(root, path), tuple(draw(filters)))


@given(exprs())
def test_property_formatted_expressions_parse_back_to_the_same_tree(expr: Expr) -> None:
    text = format_expr(expr)
    assert parse_string(text) == (expr,)


@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=40))
def test_property_text_without_dollar_is_literal(text: str) -> None:
    assert parse_string(text) == ((text,) if text else ())


@given(st.text(alphabet="${}.|()[]'\"\\ inputdefaultjson0123-_ab", max_size=30))
def test_property_any_text_parses_or_fails_with_a_located_syntax_error(text: str) -> None:
    try:
        parse_string(text)
    except TemplateSyntaxError as exc:
        assert 0 <= exc.offset <= len(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(json_values)
def test_property_whole_reference_returns_the_value_unchanged(value: Any) -> None:
    node = compile_value({"v": "${input.x}", "w": ["${input.x | json}"]}, "/t", [])
    rendered = node.render({"input": {"x": value}})
    assert rendered["v"] == value
    assert type(rendered["w"][0]) is str
