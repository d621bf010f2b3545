"""Templates, version ranges and result_extract paths are parsed once per
process when short: a second compile gives the same result as the first,
a bad one is reported every time, and a long one is parsed on each call."""

from __future__ import annotations

import pytest

from flightdeck.documents import Diagnostic
from flightdeck.drivers._extract import compile_extract
from flightdeck.drivers._package import _parse_range, parse_range
from flightdeck.drivers._template_parse import (
    TemplateSyntaxError,
    _parse_short,
    _parse_string,
    parse_string,
)


@pytest.mark.parametrize(
    "text",
    ["${input.prompt}", "a ${input.x | default('y')} b", "$${literal}", "x" * 600 + "${input.a}"],
)
def test_a_template_parses_the_same_every_time(text: str) -> None:
    assert parse_string(text) == parse_string(text) == _parse_string(text)


def test_a_long_template_is_not_kept() -> None:
    _parse_short.cache_clear()
    parse_string("${input.a}" + " " * 600)
    parse_string("${input.a}")
    assert _parse_short.cache_info().currsize == 1


def test_a_bad_template_fails_every_time() -> None:
    for _ in range(2):
        with pytest.raises(TemplateSyntaxError):
            parse_string("${input.}")


@pytest.mark.parametrize("text", ["^4.50.0", ">=4.50 <5", ">=1.0,<2.0", "~=1.2", "==1.*"])
@pytest.mark.parametrize("found", ["4.50.1", "4.49.0", "1.5.0", "2.0.0", "1.2.9"])
def test_a_range_decides_the_same_every_time(text: str, found: str) -> None:
    assert parse_range(text)(found) == parse_range(text)(found) == _parse_range(text)(found)


def test_a_bad_range_fails_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="neither an npm range"):
            parse_range("not a range")


@pytest.mark.parametrize("path", ["$.data", "$.a[0].b", "$[*]", "$.items[?(@.kind=='x')].id"])
def test_an_extract_path_matches_the_same_every_time(path: str) -> None:
    value = {"data": 1, "a": [{"b": 2}], "items": [{"kind": "x", "id": 3}]}
    first = compile_extract(path, "/p", [])
    second = compile_extract(path, "/q", [])
    assert first.matches(value) == second.matches(value)
    assert (first.singular, first.pointer, second.pointer) == (second.singular, "/p", "/q")
    assert first.apply(value) == second.apply(value)


def test_a_bad_extract_path_is_reported_every_time() -> None:
    for _ in range(2):
        diags: list[Diagnostic] = []
        compile_extract("$.[", "/r", diags)
        assert [d.code for d in diags] == ["extract_invalid"]
