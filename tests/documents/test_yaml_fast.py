"""The line-based YAML fast path gives exactly what the event-stream path gives.

`fast_compose` either declines (None) or returns the same data and the same
source map (same pointers, positions and insertion order) as the general
path; it never decides an error. Checked on generated documents, hostile
ones included, on every frontmatter of the test corpus, and on edge cases.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.documents import _yaml
from flightdeck.documents._diagnostics import Diagnostic
from flightdeck.documents._yaml_fast import fast_compose
from flightdeck.documents._yaml_state import YamlError, YamlLimits

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
LIMITS = YamlLimits()


def _general(text: str, limits: YamlLimits) -> tuple[Any, Any] | Diagnostic:
    """The event-stream path alone (the fast path switched off)."""
    with mock.patch.object(_yaml, "fast_compose", lambda *args: None):
        try:
            data, source_map = _yaml.compose(text, line_offset=3, limits=limits)
        except YamlError as exc:
            return exc.diagnostic
    return data, source_map


def _same(a: Any, b: Any) -> bool:
    """Equal JSON data, types included (1 is not 1.0 or True), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _check(text: str, limits: YamlLimits = LIMITS) -> bool:
    """Assert the fast path agrees with the general one; True if it answered."""
    fast = fast_compose(text, 3, limits)
    if fast is None:
        return False
    general = _general(text, limits)
    assert not isinstance(general, Diagnostic), (text, general)
    data, source_map = general
    assert _same(fast[0], data), (text, fast[0], data)
    assert list(fast[1].values.items()) == list(source_map.values.items()), text
    assert list(fast[1].keys.items()) == list(source_map.keys.items()), text
    return True


_KEYS = st.sampled_from(
    ["a", "b", "id", "name", "a b", "a/b", "~x", "x~1", "null", "~", "<<", "true", "1",
     "k-1", "é", "日本", "a'b", 'a"b', "a[b]", "$x", "^y", "(z)", "_", "-a", ".a", "'q'",
     "?a", "&a", "*a", "!t", "a ", "a\tb", "ключ"]
)  # fmt: skip
_WORDS = st.sampled_from(
    ["x", "hello world", "1", "-1", "+1", "1_000", "0x1F", "0o17", "1.5", "1e3", ".5", "-.inf",
     ".NaN", "true", "False", "TRUE", "yes", "on", "no", "null", "~", "Null", "2024-01-01",
     "12:30", "a:b", "a: b", "a:", "http://x/y", "--flag", "-x", "- x", "-", "'q'", "'it''s'",
     "'open", "'a' b", '"d"', '"e\\n"', '"open', "{}", "[]", "[a]", "{a: 1}", "&a x", "*a",
     "!!str 1", "!!int 1", "|", ">", "|-", "? x", "%x", "@x", "`x", "#c", "a #c", "a#b",
     "${input.x | default('1')}", "^[a-z]{2}$", "é", "\u2028", "\x85", "\ufeff", "\x7f",
     "a\tb", "9" * 120, "1" * 99, "<<", ", x", "x,", "...", "---", "[]x", "{}x"]
)  # fmt: skip
_GOOD_WORDS = st.sampled_from(
    ["x", "hello world", "1", "-1", "1.5", "true", "no", "null", "a:b", "--flag", "'q'",
     "'it''s'", '"d"', "{}", "[]", "12:30", "é", "${x | y}", "0x1F", "-.inf", "http://x/y"]
)  # fmt: skip
_GOOD_KEYS = st.sampled_from(
    ["a", "b", "id", "name", "a b", "a/b", "~x", "true", "1", "k-1", "é", "日本", "$x", "a[b]"]
)
_WELL = st.one_of(_GOOD_WORDS, _GOOD_WORDS, _GOOD_WORDS, _GOOD_WORDS, _WORDS)
_INDENTS = st.sampled_from(["", "", " ", "  ", "  ", "    ", "      ", "\t", "   "])
_DASHES = st.sampled_from(["", "", "", "- ", "-  ", "- - ", "-"])


@st.composite
def _lines(draw: st.DrawFn) -> str:
    indent, dash = draw(_INDENTS), draw(_DASHES)
    kind = draw(st.integers(0, 4))
    if kind == 0:  # `key:` opening a nested collection
        return f"{indent}{dash}{draw(_KEYS)}:"
    if kind in (1, 2):
        value = draw(_WORDS | st.text(max_size=8))
        return f"{indent}{dash}{draw(_KEYS)}:{draw(st.sampled_from([' ', '  ', '']))}{value}"
    return f"{indent}{dash}{draw(_WORDS | st.text(max_size=8))}"  # an entry or continuation


@st.composite
def _documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_lines(), min_size=1, max_size=14))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", " "]))


@st.composite
def _regular(draw: st.DrawFn) -> str:
    """Well-formed block YAML of the shapes frontmatter has, so the fast path answers."""
    out: list[str] = []

    def block(indent: int, depth: int, in_item: bool) -> None:
        for n in range(draw(st.integers(1, 4))):
            key = draw(_GOOD_KEYS if draw(st.integers(0, 9)) else _KEYS)
            pad = " " * indent
            if in_item and n == 0:
                pad = " " * (indent - 2) + "- "
            shape = draw(st.integers(0, 3)) if depth < 4 else 0
            if shape == 0:
                value = draw(_WELL)
                out.append(f"{pad}{key}: {value}")
                if draw(st.booleans()) and value[:1].isalpha():
                    out.append(" " * (indent + 2) + draw(_GOOD_WORDS))  # folded
            elif shape == 1:
                out.append(f"{pad}{key}:")
                block(indent + 2, depth + 1, False)
            else:
                out.append(f"{pad}{key}:")
                seq_indent = indent + (2 if shape == 2 else 0)
                for _ in range(draw(st.integers(1, 3))):
                    if draw(st.booleans()):
                        out.append(" " * seq_indent + "- " + draw(_WELL))
                    else:
                        block(seq_indent + 2, depth + 2, True)
            if key in ("a", "b"):
                break  # keep duplicates rare but possible

    block(0, 1, False)
    return "\n".join(out) + "\n"


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """A regular document with a few hostile edits: near misses of the subset."""
    text = draw(_regular())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            piece = draw(st.sampled_from(
                ["\t", "#", ":", " ", "- ", "-", "'", '"', "\n", "\u2028", "&a ", "*a", "{",
                 "\\", "  ", "\n  ", "\n- ", "? ", "|", "~", "/", "\x00", "\r"]
            ))  # fmt: skip
            text = text[:at] + piece + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 3)) :]
    return text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_fast_path_agrees_on_near_misses(text: str) -> None:
    _check(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_fast_path_agrees_on_arbitrary_line_soup(text: str) -> None:
    _check(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_regular())
def test_fast_path_agrees_on_regular_block_yaml(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_regular(), st.integers(1, 6), st.integers(1, 4), st.integers(1, 3), st.integers(1, 12))
def test_fast_path_agrees_under_tight_limits(
    text: str, depth: int, keys: int, digits: int, chars: int
) -> None:
    limits = YamlLimits(
        max_depth=depth, max_keys=keys, max_int_digits=digits, max_scalar_chars=chars
    )
    _check(text, limits)


def test_fast_path_agrees_on_long_keys() -> None:
    for n in (1000, 1001, 1024, 1025, 1030):  # libyaml's simple-key limit is 1,024
        _check("k" * n + ": 1\n")
        _check("a:\n- " + "k" * n + ": 1\n")


def test_fast_path_answers_the_common_shapes() -> None:
    text = (
        "schema: action/v1\nid: a:b\ncount: 3\nratio: 1.5\non: yes\nnothing: null\n"
        "description: a long line\n  folded here\nquoted: 'it''s'\n"
        'double: "x: y"\nempty: {}\nnone: []\nlist:\n- a\n- --flag\n- k: v\n  j: 2\n'
        "nested:\n  deeper:\n    - 1\n    - 'two\n      lines'\nsl/ash: 1\nti~lde: 2\n"
    )
    assert _check(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate key
        "null: 1\n",  # null key
        "a: &x 1\nb: *x\n",  # anchors
        "a:\n\tb: 1\n",  # tab
        "a: 1 # c\n",  # comment
        "a: |\n  x\n",  # block scalar
        "a: [1, 2]\n",  # flow collection
        "a:\n",  # null value
        "a: 1\n\nb: 2\n",  # blank line
        "a: 'x\nb: 2\n",  # unterminated quote
        'a: "x\\ty"\n',  # escape
        "- a\n",  # a sequence at the root
        "k" * 1100 + ": 1\n",  # a key past libyaml's simple-key limit
        "a: " + "1" * 101 + "\n",  # an integer over the digit cap
        "k" * 1025 + ": 1\n",  # a plain key longer than libyaml allows
        "a:\n- " + "k" * 1025 + ": 1\n",
        "".join(" " * i + f"k{i}:\n" for i in range(40)) + " " * 40 + "v: 1\n",  # deep
    ],
)
def test_fast_path_declines_what_it_does_not_read(text: str) -> None:
    assert fast_compose(text, 0, LIMITS) is None


def _frontmatters() -> list[Path]:
    return sorted(CORPUS.rglob("*.md"))


@pytest.mark.parametrize("path", _frontmatters(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_fast_path_agrees_on_the_corpus(path: Path) -> None:
    text = path.read_text("utf-8").replace("\r\n", "\n")
    if not text.startswith("---\n") or text.count("\n---\n") < 1:
        pytest.skip("no frontmatter block")
    _check(text[4:].split("\n---\n", 1)[0] + "\n")


def test_remembered_scalars_still_meet_a_lower_digit_cap() -> None:
    text = "a: 12345\nb: true\n"
    assert _check(text)  # resolves, and remembers, 12345 under the default cap
    tight = YamlLimits(max_int_digits=3)
    assert fast_compose(text, 0, tight) is None
    diagnostic = _general(text, tight)
    assert isinstance(diagnostic, Diagnostic) and diagnostic.code == "yaml.number_too_large"


def test_a_mapping_over_the_key_cap_is_left_to_the_general_path() -> None:
    text = "a: 1\nb: 2\nc: 3\n"
    assert fast_compose(text, 0, YamlLimits(max_keys=2)) is None
    assert _check(text, YamlLimits(max_keys=3))
