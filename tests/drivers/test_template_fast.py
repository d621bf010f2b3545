"""`ArgsTemplate.render` (each node's precompiled `reader`) agrees with `Node.render`."""

from __future__ import annotations

import types
from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.documents import Diagnostic
from flightdeck.drivers import DriverCallError
from flightdeck.drivers._template import ArgsTemplate, Node, Whole, compile_args
from flightdeck.drivers._template_parse import Default, Expr, Ref, ToJson, format_expr

KEYS = ["a", "b", "c"]
# few names, so that references often find their values, and every kind of miss
segments = st.sampled_from([*KEYS, 0])
literals = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3))
filters = st.lists(st.one_of(literals.map(Default), st.just(ToJson())), max_size=2)


@st.composite
def exprs(draw: st.DrawFn) -> Expr:
    root = draw(st.sampled_from(["input", "context", "secrets"]))
    path = tuple(draw(st.lists(segments, max_size=3)))
    if root == "secrets":  # a secret is named, and only named
        path = (draw(st.sampled_from(KEYS)),)
    # mostly plain references and defaults: the shapes the fast reader takes
    defaults = st.lists(literals.map(Default), min_size=1, max_size=2).map(tuple)
    flts = draw(st.one_of(st.just(()), defaults, filters.map(tuple)))
    return Expr(Ref(root, path), flts)


wholes = exprs().map(format_expr)  # a whole reference keeps the value's type
template_values = st.one_of(
    wholes,
    wholes,
    st.tuples(exprs(), st.text(alphabet="ab ", max_size=3)).map(lambda p: format_expr(p[0]) + p[1]),
    st.integers(0, 3),
    st.lists(wholes, max_size=2),
)
leaves = st.none() | st.integers(-2, 2) | st.text(max_size=2)


def _mapping_kinds(d: dict[str, Any]) -> st.SearchStrategy[Any]:
    # dict subclasses and other mappings take the general path inside the reader
    return st.sampled_from([d, OrderedDict(d), types.MappingProxyType(d)])


data = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3).flatmap(_mapping_kinds)
    ),
    max_leaves=10,
)
roots = st.one_of(st.dictionaries(st.sampled_from(KEYS), data, max_size=3), data)
scopes = st.fixed_dictionaries({"input": roots, "context": roots}, optional={"secrets": data})


def general(template: ArgsTemplate, scope: dict[str, Any]) -> Any:
    """The per-node `render` path: what the readers must match, errors included."""
    try:
        return (
            [node.render(scope) for node in template.positional],
            {name: node.render(scope) for name, node in template.keywords},
        )
    except DriverCallError as exc:
        return ("error", exc.code, exc.message, exc.pointer, exc.hint)
    except TypeError as exc:  # `json` of a value with no JSON form (here a mappingproxy)
        return ("error", type(exc), str(exc))


def fast(template: ArgsTemplate, scope: dict[str, Any]) -> Any:
    try:
        return template.render(scope)
    except DriverCallError as exc:
        return ("error", exc.code, exc.message, exc.pointer, exc.hint)
    except TypeError as exc:  # `json` of a value with no JSON form (here a mappingproxy)
        return ("error", type(exc), str(exc))


@settings(max_examples=300)
@given(
    st.dictionaries(st.sampled_from(["_0", "_1", "x", "y", "z"]), template_values, max_size=4),
    scopes,
)
def test_property_precompiled_readers_render_as_the_nodes_do(
    spec: dict[str, Any], scope: dict[str, Any]
) -> None:
    if "_1" in spec and "_0" not in spec:
        spec.pop("_1")  # positions run without gaps (a registration error otherwise)
    diags: list[Diagnostic] = []
    template = compile_args(spec, "/args", diags)
    assert diags == []
    got, expected = fast(template, scope), general(template, scope)
    assert got == expected
    picked = template.pick(scope["input"])
    if picked is not None:  # the input-fields shortcut: the same arguments, the same objects
        assert expected == ([], picked)
        assert all(picked[name] is expected[1][name] for name in picked)
    if expected[0] != "error":  # a whole reference gives the very object (defaults too)
        for i, node in enumerate(template.positional):
            assert not _reads(node) or got[0][i] is expected[0][i]
        for name, node in template.keywords:
            assert not _reads(node) or got[1][name] is expected[1][name]


def _reads(node: Node) -> bool:
    """A whole reference without `json`: its value is the object in the scope."""
    return isinstance(node, Whole) and not any(isinstance(f, ToJson) for f in node.expr.filters)


def test_readers_cover_the_common_shapes_and_leave_the_rest_to_render() -> None:
    template = compile_args(
        {
            "a": "${input.a}",
            "b": "${input.b.c | default(1)}",
            "c": "${input.items[0]}",
            "d": "${input.a | json}",
            "e": "${input.zz | default(3) | default(4)}",  # chained: the first one found
            "f": "${input.a | default(null) | default(4)}",
        },
        "/args",
        [],
    )
    fast_ones = [name for name, node in template.keywords if node.reader() != node.render]
    assert fast_ones == ["a", "b", "e", "f"]
    scope = {"input": {"a": None, "b": {"c": None}, "items": [5]}}
    expected = {"a": None, "b": 1, "c": 5, "d": "null", "e": 3, "f": 4}
    assert template.render(scope) == ([], expected)


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(["x", "y", "z", "_0"]),
        st.sampled_from(["${input.a}", "${input.b}", "${input.c}", "${input.a | default(1)}"]),
        max_size=3,
    ),
    st.one_of(st.dictionaries(st.sampled_from(KEYS), data, max_size=3), data),
)
def test_property_picking_input_fields_agrees_with_render(spec: dict[str, Any], input: Any) -> None:
    """Templates made mostly of `${input.name}`: `pick` answers exactly when every
    argument is such a pick and the input is a dict holding every field."""
    template = compile_args(spec, "/args", [])
    scope = {"input": input, "context": {}}
    picked, expected = template.pick(input), general(template, scope)
    only_picks = all("|" not in v for v in spec.values()) and "_0" not in spec
    holds = type(input) is dict and all(v[8] in input for v in spec.values())
    assert (picked is not None) == (only_picks and holds)
    if picked is not None:
        assert expected == ([], picked)


def test_picking_leaves_everything_else_to_render() -> None:
    plain = compile_args({"x": "${input.a}", "y": "${input.b}"}, "/args", [])
    assert plain.pick({"a": 1, "b": None}) == {"x": 1, "y": None}
    assert plain.pick({"a": 1}) is None  # a missing field: render words the error
    assert plain.pick(OrderedDict(a=1, b=2)) is None  # not an exact dict
    for spec in (
        {"x": "${input.a}", "_0": "${input.b}"},  # a position
        {"x": "${input.a.b}"},  # a deeper path
        {"x": "${context.a}"},  # another root
        {"x": "${input.a | default(1)}"},  # a filter
        {"x": "${input.a} "},  # text around it
        {"x": 3},  # a constant
    ):
        assert compile_args(spec, "/args", []).pick({"a": {"b": 1}, "b": 2}) is None
