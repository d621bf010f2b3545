"""A JSON frontmatter as `json.dumps` writes it reads as JSON reads it, also
when a character beyond the BMP is escaped as a surrogate pair
(`"\\ud83d\\udca9"`), which libyaml refuses on its own; positions stay the
file's columns."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.documents import DocumentKind, LoadResult, parse_document


def _parse(text: str) -> LoadResult:
    return parse_document(text, path="x.md", kind=DocumentKind.ACTION)


# Text with characters beyond the BMP, backslashes (so an escaped backslash
# before "ud83d" is written) and quotes.
_text = st.text(
    alphabet=st.sampled_from(["a", " ", "\\", '"', "u", "d", "8", "\U0001f4a9", "\U0001f600", "é"]),
    max_size=8,
)
_values = st.recursive(
    st.one_of(st.integers(-1000, 1000), st.booleans(), st.none(), _text),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(_text, children, max_size=3)
    ),
    max_leaves=12,
)


_TWINS = {"\U0001f4a9": "ÿÿ", "\U0001f600": "þþ"}


def _twin(value: Any) -> Any:
    """`value` with each character beyond the BMP replaced by two BMP
    characters that `json.dumps` escapes to the same width as a surrogate
    pair (`\\u00ff\\u00ff`, 12 characters); neither is in the alphabet, so
    no two keys become one."""
    if isinstance(value, str):
        return "".join(_TWINS.get(c, c) for c in value)
    if isinstance(value, list):
        return [_twin(v) for v in value]
    if isinstance(value, dict):
        return {_twin(k): _twin(v) for k, v in value.items()}
    return value


def _document(data: dict[str, Any], indent: int | None) -> str:
    return "---\n" + json.dumps(data, indent=indent) + "\n---\nbody\n"


@settings(max_examples=300, deadline=None)
@given(
    data=st.dictionaries(_text, _values, min_size=1, max_size=4),
    indent=st.sampled_from([None, 2]),
)
def test_json_with_surrogate_pairs_reads_as_json_reads_it(
    data: dict[str, Any], indent: int | None
) -> None:
    data = {"name": "x", **data}
    text = _document(data, indent)
    result = _parse(text)
    assert result.document is not None, result.diagnostics
    assert result.document.data == json.loads(json.dumps(data))
    # Every key and value is located where it is in the file: the same
    # positions as a twin document whose escapes have the same widths.
    twin = _parse(_document(_twin(data), indent))
    assert twin.document is not None
    source, other = result.document.source_map, twin.document.source_map
    assert {_twin(k): v for k, v in source.values.items()} == other.values
    assert {_twin(k): v for k, v in source.keys.items()} == other.keys


def test_a_pair_is_one_character_and_later_keys_keep_their_columns() -> None:
    line = '{"name": "x", "a": "\\ud83d\\udca9\\ud83d\\ude00", "b": 1}'
    result = _parse("---\n" + line + "\n---\n")
    assert result.document is not None
    assert result.document.data["a"] == "\U0001f4a9\U0001f600"
    assert result.document.source_map.keys["/b"] == (2, line.index('"b"') + 1)


def test_an_escaped_backslash_is_not_an_escape() -> None:
    # `\\ud83d\\udca9` in JSON is a backslash and text, twice, not a pair.
    result = _parse('---\n{"name": "\\\\ud83d\\\\udca9", "x": "\\ud83d\\udca9"}\n---\n')
    assert result.document is not None
    assert result.document.data == {"name": "\\ud83d\\udca9", "x": "\U0001f4a9"}


def test_single_quoted_and_plain_scalars_keep_their_text() -> None:
    text = "---\nname: '\\ud83d\\udca9'\nplain: \\ud83d\\udca9\nq: \"\\ud83d\\udca9\"\n---\n"
    result = _parse(text)
    assert result.document is not None
    assert result.document.data == {
        "name": "\\ud83d\\udca9",
        "plain": "\\ud83d\\udca9",
        "q": "\U0001f4a9",
    }


def test_a_lone_surrogate_stays_an_error_located_in_the_file() -> None:
    # JSON would read a lone half as a lone surrogate, which is no UTF-8 text.
    line = '{"a": "\\ud83d\\udca9", "name": "\\ud83d x"}'
    result = _parse("---\n" + line + "\n---\n")
    assert result.document is None
    (problem,) = result.diagnostics
    assert problem.code == "yaml.syntax"
    assert (problem.line, problem.column) == (2, line.index("\\ud83d x") + 3)


def test_an_error_after_a_pair_is_located_in_the_file() -> None:
    line = '{"a": "\\ud83d\\udca9", "name": "x", "name": "y"}'
    result = _parse("---\n" + line + "\n---\n")
    assert result.document is None
    (problem,) = result.diagnostics
    assert problem.code == "yaml.duplicate_key"
    assert problem.column == line.rindex('"name"') + 1
