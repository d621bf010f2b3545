"""`jcs` encodes plain data with the stdlib encoder; the bytes must be rfc8785's
for every value, and values rfc8785 refuses must still be refused."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.flightplan._canonical import CanonicalError, jcs

# Text that exercises escaping, the BMP/supplementary key order and surrogates.
_text = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F),
        st.sampled_from(["\u00e9", "\ue000", "\uffff", "\U0001f600", "\U00010000", "\x7f"]),
        st.characters(min_codepoint=0, max_codepoint=0x1F),
    ),
    max_size=8,
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**54), max_value=2**54),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=20,
)


def _reference(value: Any) -> bytes | None:
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        return None


@settings(max_examples=400, deadline=None)
@given(_values)
def test_jcs_is_rfc8785(value: Any) -> None:
    expected = _reference(value)
    if expected is None:
        with pytest.raises(CanonicalError):
            jcs(value)
    else:
        assert jcs(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {"\U0001f600": 1, "\ufb01": 2},  # UTF-16 order differs from code-point order
        {"a": 2**53},  # beyond the safe integers: refused
        {"a": "\ud800"},  # a lone surrogate: refused
        {"a": 1.0, "b": 1e21},  # ECMAScript number forms
        {"z": [True, None, '\x1f\n"\\'], "a": {}},
    ],
)
def test_edge_cases_match_rfc8785(value: Any) -> None:
    expected = _reference(value)
    if expected is None:
        with pytest.raises(CanonicalError):
            jcs(value)
    else:
        assert jcs(value) == expected
