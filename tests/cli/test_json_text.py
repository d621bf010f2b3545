"""`dumps_indented` writes what `json.dumps(value, indent=2)` writes."""

from __future__ import annotations

import enum
import json

from hypothesis import given
from hypothesis import strategies as st

from flightdeck.cli._json_text import dumps_indented

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=True, allow_infinity=True)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.integers() | st.booleans() | st.none(), inner, max_size=2)
    ),
    max_leaves=24,
)


class _Colour(enum.StrEnum):
    RED = "red"


class _Size(enum.IntEnum):
    BIG = 7


@given(_json)
def test_the_text_is_that_of_json_dumps(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2)


def test_subclasses_and_odd_text_are_written_as_json_dumps_writes_them() -> None:
    value = {
        "enum": [_Colour.RED, _Size.BIG],
        "text": 'caf\u00e9 \u2028 \x00 "q" \\ \ud83d\ude00 \n\t',
        "nested": {"empty": {}, "none": [], "deep": [[[{"a": [1, True, None]}]]]},
        "big": 10**40,
    }
    assert dumps_indented(value) == json.dumps(value, indent=2)
    assert dumps_indented([]) == "[]" and dumps_indented("x") == '"x"'
