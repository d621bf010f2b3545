"""result_extract: RFC 9535 JSONPath (AIP-31's JSONPath-lite forms are a subset)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.documents import Diagnostic
from flightdeck.drivers import DriverCallError
from flightdeck.drivers._extract import Extractor, compile_extract

VALUE: dict[str, Any] = {
    "data": [{"url": "u1", "kind": "X"}, {"url": "u2", "kind": "Y"}],
    "result": {"image": {"url": "deep"}},
    "choices": [{"message": {"content": "hello"}}],
}


def extract(path: str | None, value: Any = VALUE) -> Any:
    diags: list[Diagnostic] = []
    extractor = compile_extract(path, "/implements/0/metadata/sdk/result_extract", diags)
    assert diags == []
    return extractor.apply(value)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (None, VALUE),
        ("$", VALUE),
        ("$.result.image.url", "deep"),
        ("$.data[0].url", "u1"),
        ("$.choices[0].message.content", "hello"),
        ("$.data[*].url", ["u1", "u2"]),
        ("$.data[?(@.kind=='X')].url", ["u1"]),
        ("$.data[?@.kind=='Y'].url", ["u2"]),
    ],
)
def test_aip31_jsonpath_lite_forms(path: str | None, expected: Any) -> None:
    assert extract(path) == expected


def test_root_wildcard_over_a_list() -> None:
    assert extract("$[*]", [1, 2]) == [1, 2]


def test_no_match_is_extract_no_match_with_path_and_short_view() -> None:
    big = {"a": "x" * 1000}
    with pytest.raises(DriverCallError) as info:
        extract("$.data[0].url", big)
    assert info.value.code == "extract_no_match"
    assert "$.data[0].url" in info.value.message
    assert '{"a": "xxx' in info.value.message
    assert len(info.value.message) < 300
    assert info.value.pointer == "/implements/0/metadata/sdk/result_extract"


def test_invalid_path_is_a_registration_diagnostic() -> None:
    diags: list[Diagnostic] = []
    compile_extract("$.a[", "/p", diags)
    assert [d.code for d in diags] == ["extract_invalid"]
    assert diags[0].pointer == "/p"


# The dotted-path fast path answers exactly what the RFC 9535 library does.
_names = st.sampled_from(["a", "b", "sum", "_x", "a1"])
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names, inner, max_size=3),
    max_leaves=12,
)


@given(st.lists(_names, min_size=1, max_size=4), _json)
def test_dotted_paths_match_the_library(keys: list[str], value: object) -> None:
    path = "$." + ".".join(keys)
    fast = compile_extract(path, "/x", [])
    library = compile_extract(path.replace(".", "['", 1).replace(".", "']['") + "']", "/x", [])
    assert fast._keys is not None and library._keys is None
    assert fast.matches(value) == library.matches(value)
    assert outcome(fast, value) == outcome(library, value)


def outcome(extractor: Extractor, value: object) -> object:
    try:
        return ("value", extractor.apply(value))
    except DriverCallError as exc:
        return ("error", exc.code, exc.message.replace(repr(extractor.path), "PATH"), exc.pointer)
