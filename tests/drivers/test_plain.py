"""`to_plain`: return values as plain JSON data; its fast paths against the plain rule."""

from __future__ import annotations

import dataclasses
import enum
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.drivers._plain import NotPlain, to_plain


class Level(enum.IntEnum):
    LOW = 1


@dataclasses.dataclass
class Point:
    x: int
    y: list[int]


def reference(value: Any) -> Any:
    """The rule written plainly: what every fast path must agree with."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, Mapping):
        return {str(k): reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [reference(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return reference(dataclasses.asdict(value))
    raise NotPlain(type(value).__name__)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.just(Level.LOW),
)
keys = st.one_of(st.text(max_size=3), st.integers(-3, 3), st.just(Level.LOW), st.booleans())
values = st.recursive(
    scalars | st.builds(Point, st.integers(), st.lists(st.integers(), max_size=2)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.dictionaries(st.text(max_size=3), inner, max_size=4).map(OrderedDict),
    ),
    max_leaves=12,
)


@given(values)
def test_to_plain_follows_the_rule_and_copies(value: Any) -> None:
    out = to_plain(value)
    # repr: the same types too (True is not 1), keys in the same order
    assert repr(out) == repr(reference(value))
    if isinstance(value, (dict, list)):
        assert out is not value  # a copy: the package may keep and change its own


@given(st.dictionaries(keys, scalars, max_size=5), st.lists(scalars, max_size=5))
def test_flat_dicts_and_lists_are_copies_with_text_keys(
    flat: dict[Any, Any], items: list[Any]
) -> None:
    for value in (flat, items):
        out = to_plain(value)
        assert repr(out) == repr(reference(value)) and out is not value


@pytest.mark.parametrize("bad", [{"a": object()}, [1, {2}], {"a": [b"x"]}, (1, object())])
def test_a_value_with_no_json_form_is_refused_wherever_it_sits(bad: Any) -> None:
    with pytest.raises(NotPlain):
        to_plain(bad)
