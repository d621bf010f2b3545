"""The YAML builder's hot loop against the general path it shortcuts.

`Builder.run` handles the common events inline for speed; whatever YAML it
reads, it must give the same data, the same source map (every pointer's line
and column, keys and values) and the same diagnostic (code, message, pointer,
line, column, hint) as a loop that sends every event down the general path
(`_GeneralOnly` here), under default and under small limits, so that every
cap is met both on the fast path and off it. The plain-scalar resolver is
checked against the one it replaced (`_yaml_oracle`).
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from yaml import events as ev

from flightdeck.documents import _yaml
from flightdeck.documents._yaml import YamlError, YamlLimits
from flightdeck.documents._yaml_general import GeneralPath
from flightdeck.documents._yaml_scalars import plain_scalar
from tests.documents import _yaml_oracle


class _GeneralOnly(GeneralPath):
    """The builder with no inline shortcuts: every event through the general
    path's own handling."""

    def run(self, parser: Any) -> Any:
        while True:
            event = parser.get_event()
            if isinstance(event, ev.ScalarEvent):
                self.slow_scalar(event, event.value)
            elif isinstance(event, ev.MappingStartEvent | ev.SequenceStartEvent):
                self.slow_start(event, isinstance(event, ev.MappingStartEvent))
            elif isinstance(event, ev.MappingEndEvent | ev.SequenceEndEvent):
                self.end()
            elif isinstance(event, ev.AliasEvent):
                self.alias(event)
            elif isinstance(event, ev.DocumentStartEvent):
                self.start_document(event)
            elif isinstance(event, ev.StreamEndEvent):
                return self.root


def _general_compose(text: str, *, line_offset: int, limits: YamlLimits) -> Any:
    with mock.patch.object(_yaml, "Builder", _GeneralOnly):
        return _yaml.compose(text, line_offset=line_offset, limits=limits)


_ODD = [
    "on", "off", "yes", "no", "y", "n", "0x1F", "0o17", "017", "1e3", "1E3", "-1.5e-3",
    ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "~", "null", "Null", "NULL", "true", "False",
    "TRUE", "2024-01-01", "2024-01-01T10:00:00Z", "12:30", "+12", "-0", "0.", ".5", "1_000",
    "0b101", "9" * 8, "-" + "9" * 8, "<<", "a/b", "t~1", "~x", "x y", "é", "",
]  # fmt: skip
_KEYS = ["a", "b", "c", "d", "e", "on", "1", "<<", "x/y", "t~0", "a", "b", "*a0", "[k]", "~"]
_TAGS = ["!!str", "!!int", "!!float", "!!bool", "!!null", "!", "!custom", "!!map", "!!seq"]


def _words() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(_ODD),
        st.text(alphabet="abcxyz019 .-_:#&*!/~", min_size=1, max_size=8),
    )


def _scalar(draw: st.DrawFn, anchors: list[str]) -> str:
    text = draw(_words())
    style = draw(st.sampled_from(["plain", "plain", "plain", "single", "double", "big"]))
    if style == "single":
        text = "'" + text.replace("'", "''") + "'"
    elif style == "double":
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif style == "big":
        text = "x" * draw(st.integers(1, 120))
    return _decorate(draw, text, anchors)


def _decorate(draw: st.DrawFn, text: str, anchors: list[str]) -> str:
    if draw(st.integers(0, 9)) == 0:
        text = f"{draw(st.sampled_from(_TAGS))} {text}"
    if draw(st.integers(0, 5)) == 0:
        name = f"a{draw(st.integers(0, 4))}"
        anchors.append(name)
        text = f"&{name} {text}"
    return text


def _alias(draw: st.DrawFn, anchors: list[str]) -> str:
    names = [*anchors, "nope"] if draw(st.integers(0, 9)) == 0 else anchors
    return "*" + draw(st.sampled_from(names)) if names else "~"


def _flow(draw: st.DrawFn, depth: int, anchors: list[str]) -> str:
    choice = draw(st.integers(0, 6 if depth < 5 else 3))
    if choice <= 2 or depth >= 7:
        return _scalar(draw, anchors)
    if choice == 3:
        return _alias(draw, anchors)
    items = draw(st.integers(0, 4))
    if choice == 4:
        inner = ", ".join(_flow(draw, depth + 1, anchors) for _ in range(items))
        return _decorate(draw, f"[{inner}]", anchors)
    pairs = [f"{draw(st.sampled_from(_KEYS))}: {_flow(draw, depth + 1, anchors)}"]
    pairs += [
        f"{draw(st.sampled_from(_KEYS))}: {_flow(draw, depth + 1, anchors)}" for _ in range(items)
    ]
    return _decorate(draw, "{" + ", ".join(pairs) + "}", anchors)


def _block(draw: st.DrawFn, indent: int, depth: int, anchors: list[str]) -> str:
    """A block collection at `indent`, one item per line."""
    pad = " " * indent
    is_map = draw(st.booleans())
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        head = f"{pad}{draw(st.sampled_from(_KEYS))}:" if is_map else f"{pad}-"
        kind = draw(st.integers(0, 5 if depth < 6 else 2))
        if kind <= 1:
            lines.append(f"{head} {_scalar(draw, anchors)}")
        elif kind == 2:
            lines.append(f"{head} {_alias(draw, anchors)}")
        elif kind == 3:
            lines.append(f"{head} {_flow(draw, depth + 1, anchors)}")
        else:
            prefix = ""
            if draw(st.integers(0, 3)) == 0:
                name = f"a{draw(st.integers(0, 4))}"
                prefix = f" &{name}"
            lines.append(f"{head}{prefix}")
            lines.append(_block(draw, indent + 2, depth + 1, anchors))
            if prefix:
                anchors.append(prefix[2:])
    return "\n".join(lines)


@st.composite
def _documents(draw: st.DrawFn) -> str:
    anchors: list[str] = []
    shape = draw(st.integers(0, 12))
    if shape == 0:
        return _flow(draw, 0, anchors) + "\n"
    if shape == 2:  # aliases of aliases: the expansion cap
        return "a: &a0 [1, 2, 3]\nb: &a1 [*a0, *a0, *a0]\nc: [*a1, *a1, *a1]\n"
    if shape == 1:  # deep nesting, around the hard cap
        n = draw(st.integers(1, 140))
        if draw(st.booleans()):
            return "k: " + "[" * n + "]" * n + "\n"
        return "".join(" " * i + f"k{i}:\n" for i in range(n)) + " " * n + "v\n"
    return _block(draw, 0, 0, anchors) + "\n"


_limits = st.one_of(
    st.just(YamlLimits()),
    st.builds(
        YamlLimits,
        max_depth=st.integers(1, 10),
        max_alias_expansion=st.integers(0, 30),
        max_scalar_chars=st.integers(1, 80),
        max_int_digits=st.integers(1, 6),
        max_keys=st.integers(1, 4),
    ),
)


def _outcome(compose: Any, text: str, limits: YamlLimits, offset: int) -> tuple[Any, ...]:
    try:
        data, source_map = compose(text, line_offset=offset, limits=limits)
    except YamlError as exc:
        return ("error", exc.diagnostic)
    # repr: tells 1 from 1.0 from True, keeps key order, and nan equals nan
    return ("ok", repr(data), source_map.values, source_map.keys)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_documents(), limits=_limits, offset=st.integers(0, 3))
@example(text="a: 1\nb: &x {c: [1, 2]}\n<<: *x\nd: *x\n", limits=YamlLimits(), offset=1)
@example(text="a: 1\na: 2\n", limits=YamlLimits(), offset=1)
@example(text="a: xxxxxx\n", limits=YamlLimits(max_scalar_chars=5), offset=1)
@example(text="a: 1\nb: 2\n", limits=YamlLimits(max_keys=1), offset=1)
@example(text="a: {b: {c: 1}}\n", limits=YamlLimits(max_depth=2), offset=1)
@example(text="a: [[1]]\n", limits=YamlLimits(max_depth=2), offset=1)
@example(text="a: 1234567\n", limits=YamlLimits(max_int_digits=6), offset=1)
@example(text="a: &x [1, 2]\nb: [*x, *x]\n", limits=YamlLimits(max_alias_expansion=5), offset=1)
def test_builder_matches_the_general_path(text: str, limits: YamlLimits, offset: int) -> None:
    _check(text, limits, offset)


def _check(text: str, limits: YamlLimits, offset: int) -> None:
    expected = _outcome(_general_compose, text, limits, offset)
    assert _outcome(_yaml.compose, text, limits, offset) == expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab:-[]{},&*! \n'\"#?|>~0x.", max_size=60))
def test_builder_matches_the_general_path_on_arbitrary_text(text: str) -> None:
    limits = YamlLimits(max_depth=4, max_keys=3, max_scalar_chars=10, max_alias_expansion=6)
    _check(text, limits, 1)


_scalar_text = st.one_of(
    st.sampled_from(_ODD),
    st.text(alphabet="0123456789+-.eExXoOabfinINtTrRuUlLsSnN~_ :", max_size=12),
    st.from_regex(
        r"[-+]?(0[xo])?[0-9a-fA-F_]{0,8}(\.[0-9]*)?([eE][-+]?[0-9]{1,3})?", fullmatch=True
    ),
)


@settings(max_examples=2000, deadline=None)
@given(text=_scalar_text, digits=st.integers(1, 12))
def test_plain_scalar_matches_the_oracle(text: str, digits: int) -> None:
    def outcome(plain_scalar: Any) -> str:
        try:
            return repr(plain_scalar(text, digits))
        except Exception as exc:  # TooBig: each module has its own class
            return type(exc).__name__

    assert outcome(plain_scalar) == outcome(_yaml_oracle.plain_scalar)
