"""`ref_problems` skips a schema without references by a walk that builds no
pointers: it must say "none" exactly when the full walk finds none."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flightdeck.documents._offline import _has_refs, _refs

_keys = st.sampled_from(
    ["$ref", "$dynamicRef", "$id", "enum", "const", "examples", "properties", "items", "a"]
)
_leaves = st.none() | st.integers() | st.sampled_from(["#/$defs/x", "https://e.com/s", ""])
_schemas = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)


@given(_schemas)
def test_has_refs_is_whether_the_walk_finds_any(schema: object) -> None:
    assert _has_refs(schema) == bool(list(_refs(schema)))


def test_a_ref_under_enum_is_not_a_reference_but_one_under_properties_is() -> None:
    assert not _has_refs({"enum": [{"$ref": "#/x"}], "const": {"$ref": "#/y"}})
    assert _has_refs({"properties": {"a": {"items": [{"$ref": "#/x"}]}}})
    assert not _has_refs({"$ref": 3, "$dynamicRef": None})


def test_data_nested_past_the_stack_takes_the_full_walk() -> None:
    deep: object = {"$ref": "#/x"}
    for _ in range(5_000):
        deep = {"items": deep}
    assert _has_refs(deep) and [r[2] for r in _refs(deep)] == ["#/x"]
    flat: object = {"a": 1}
    for _ in range(5_000):
        flat = [flat]
    assert _has_refs(flat)  # unknown, so the walk decides: it finds none
    assert list(_refs(flat)) == []
