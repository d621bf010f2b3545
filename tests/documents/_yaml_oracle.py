"""Test oracle: the YAML event builder as it was on main at commit
8a899c4 (src/flightdeck/documents/_yaml.py, _yaml_events.py, _yaml_scalars.py,
_yaml_state.py), copied once into this one module and not to be edited, so
that the optimised builder can be checked against it (data, source map and
diagnostics) by tests/documents/test_yaml_differential.py.

Two known differences: a frontmatter that is one scalar over the size cap
raises IndexError here (fixed in f2c1b0a), and `<<` before a written-out
list of non-mappings raises AttributeError (fixed in 39458f2). Only the
imports were merged; YamlError and YamlLimits are the package's own (they
hold no logic), so a caught error and a limits object are shared.
"""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml import events as ev

from flightdeck.documents._diagnostics import Diagnostic, pointer_join
from flightdeck.documents._document import SourceMap
from flightdeck.documents._yaml_state import YamlError, YamlLimits


# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
NULL = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT10 = re.compile(r"[-+]?[0-9]+\Z")
_INT8 = re.compile(r"0o[0-7]+\Z")
_INT16 = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")


class TooBig(Exception):
    """An integer scalar with more digits than the cap."""


class ScalarProblem(Exception):
    """A scalar that cannot be read as JSON data; the builder locates it."""

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


# First characters a non-string plain scalar can start with.
SCALAR_STARTS = frozenset("0123456789+-.~nNtTfF")


def _int(text: str, base: int, digits: int, cap: int) -> int:
    if digits > cap:
        raise TooBig
    return int(text, base)


def plain_scalar(text: str, max_digits: int) -> Any:
    if text and text[0] not in SCALAR_STARTS:
        return text  # the common case: an ordinary word
    if text in NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT10.match(text):
        return _int(text, 10, len(text.lstrip("+-")), max_digits)
    if _INT8.match(text):
        return _int(text[2:], 8, len(text) - 2, max_digits)
    if _INT16.match(text):
        return _int(text[2:], 16, len(text) - 2, max_digits)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text[0] == "-" else math.inf
    if _NAN.match(text):
        return math.nan
    return text


EXPLICIT = {
    "tag:yaml.org,2002:str": str,
    "tag:yaml.org,2002:int": int,
    "tag:yaml.org,2002:float": float,
}


def resolve_tagged(tag: str | None, text: str, plain: bool, max_digits: int) -> Any:
    """A scalar's value under its tag (none, `!`, or a core-schema tag)."""
    try:
        if tag is None or tag == "!":
            return plain_scalar(text, max_digits) if plain else text
        convert = EXPLICIT.get(tag)
        if convert is not None:
            if convert is int and len(text) > max_digits:
                raise TooBig
            try:
                return convert(text)
            except ValueError:
                raise ScalarProblem(
                    "yaml.bad_scalar", f"{short(text)!r} is not a valid {tag}"
                ) from None
        resolved = plain_scalar(text, max_digits)
    except TooBig:
        raise ScalarProblem(
            "yaml.number_too_large",
            f"an integer of more than {max_digits} digits",
            "quote it if it is an identifier rather than a number",
        ) from None
    if tag == "tag:yaml.org,2002:bool" and isinstance(resolved, bool):
        return resolved
    if tag == "tag:yaml.org,2002:null" and resolved is None:
        return None
    raise ScalarProblem(
        "yaml.unsupported_tag",
        f"unsupported tag {short(tag)!r}",
        "manifests hold plain JSON data: strings, numbers, booleans, null, lists, maps",
    )


def short(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= 60 else text[:57] + "..."


# Shared by every frame until a `<<` merge needs a set of its own.
_NONE_MERGED: frozenset[str] = frozenset()

# Hard ceiling on nesting whatever the user asks for: the schema validators
# that read the data afterwards recurse once per level.
HARD_MAX_DEPTH = 128


def too_deep_hint(max_depth: int) -> str:
    """The hint of a `yaml.too_deep` under the effective depth limit `max_depth`."""
    if max_depth < HARD_MAX_DEPTH:
        return "raise the limit with --max-depth if this is intended"
    return f"{HARD_MAX_DEPTH} levels is the most flightdeck reads"


@dataclass
class Anchor:
    value: Any
    text: str | None  # a scalar's source text, for use as a mapping key
    size: int  # nodes the anchored value holds
    height: int  # nesting levels (0 for a scalar)


class Frame:
    """One open sequence or mapping on the explicit stack."""

    __slots__ = (
        "anchor",
        "child",
        "container",
        "height",
        "is_map",
        "key",
        "merged",
        "merging",
        "pointer",
        "size",
    )

    def __init__(self, container: Any, pointer: str, anchor: str | None) -> None:
        self.container = container
        self.is_map = isinstance(container, dict)
        self.pointer = pointer
        self.anchor = anchor
        self.key: str | None = None  # mappings: the key awaiting its value
        self.child = ""  # mappings: the pointer of that value
        self.merging = False  # mappings: the pending key is `<<`
        self.merged: set[str] | frozenset[str] = _NONE_MERGED  # a set once `<<` merges
        self.height = 1
        self.size = 1


def copy_value(value: Any) -> Any:
    """A copy of JSON data; recursion is bounded by the depth cap."""
    if isinstance(value, dict):
        return {k: copy_value(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    return [copy_value(v) if isinstance(v, dict | list) else v for v in value]


_SLOW = object()  # `quick` could not decide: take the general path
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


class Builder:
    """Consumes parser events into JSON data and a source map."""

    def __init__(self, line_offset: int, limits: YamlLimits) -> None:
        self.line_base = line_offset + 1  # libyaml lines are 0-based
        self.limits = limits
        self.max_depth = min(limits.max_depth, HARD_MAX_DEPTH)
        self.max_chars = limits.max_scalar_chars  # read on every scalar
        self.max_keys = limits.max_keys
        self.values: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}
        self.stack: list[Frame] = []
        self.anchors: dict[str, Anchor] = {}
        self.expanded = 0
        self.root: Any = None

    # -- positions and failures -------------------------------------------------

    def pos(self, event: Any) -> tuple[int, int]:
        mark = event.start_mark
        return (mark.line + self.line_base, mark.column + 1)

    def fail(
        self, code: str, message: str, event: Any, pointer: str, hint: str | None = None
    ) -> None:
        line, col = self.pos(event)
        raise YamlError(
            Diagnostic(code, message, pointer=pointer, line=line, column=col, hint=hint)
        )

    def record(self, is_key: bool, pointer: str, where: tuple[int, int]) -> None:
        (self.keys if is_key else self.values)[pointer] = where

    # -- the event loop ---------------------------------------------------------

    def run(self, parser: Any) -> Any:
        # Bound once: this loop runs once per event (about 120 per manifest).
        get_event = parser.get_event
        scalar, start, end = self.scalar, self.start, self.end
        scalar_event, mapping_start, sequence_start = (
            ev.ScalarEvent,
            ev.MappingStartEvent,
            ev.SequenceStartEvent,
        )
        mapping_end, sequence_end = ev.MappingEndEvent, ev.SequenceEndEvent
        documents = 0
        while True:
            event = get_event()
            cls = event.__class__
            if cls is scalar_event:
                scalar(event)
            elif cls is mapping_start:
                start(event, True)
            elif cls is sequence_start:
                start(event, False)
            elif cls is mapping_end or cls is sequence_end:
                end()
            elif cls is ev.AliasEvent:
                self.alias(event)
            elif cls is ev.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    self.fail(
                        "yaml.syntax",
                        "expected a single document in the frontmatter",
                        event,
                        "",
                        hint="remove the second document ('...' or '---' inside the block)",
                    )
            elif cls is ev.StreamEndEvent:
                return self.root

    def child_pointer(self, event: Any) -> str | None:
        """The pointer of the value this event starts; None when it is a key."""
        if not self.stack:
            return ""
        frame = self.stack[-1]
        if not frame.is_map:
            return f"{frame.pointer}/{len(frame.container)}"
        if frame.key is None:
            return None
        return frame.pointer if frame.merging else self.pointer_for(frame, frame.key)

    @staticmethod
    def pointer_for(frame: Frame, key: str) -> str:
        if "/" in key or "~" in key:
            return pointer_join(frame.pointer, key)
        return f"{frame.pointer}/{key}"

    def scalar(self, event: Any) -> None:
        text = event.value
        stack = self.stack
        # The hot path: an untagged, unanchored scalar inside a container, with
        # nothing to check beyond what is tested inline here; anything else
        # (and every failure) takes the general path below.
        if (
            not stack
            or event.anchor is not None
            or event.tag is not None
            or len(text) > self.max_chars
        ):
            self.slow_scalar(event, text)
            return
        frame = stack[-1]
        container = frame.container
        if frame.is_map:
            key = frame.key
            if key is None:  # a mapping key: its source text, never resolved
                if (
                    text not in container
                    and text not in NULL
                    and text != "<<"
                    and "/" not in text
                    and "~" not in text
                    and len(container) < self.max_keys
                ):
                    child = frame.pointer + "/" + text
                    frame.key = text
                    frame.child = child
                    mark = event.start_mark
                    self.keys[child] = (mark.line + self.line_base, mark.column + 1)
                else:
                    self.slow_scalar(event, text)
                return
            if frame.merging:
                self.slow_scalar(event, text)
                return
            pointer = frame.child
        else:
            pointer = f"{frame.pointer}/{len(container)}"
        if not event.implicit[0]:
            value: Any = text  # quoted or block text: always a string
        elif text and text[0] not in SCALAR_STARTS:
            value = text  # an ordinary word
        else:
            value = self.quick(text)
            if value is _SLOW:
                self.slow_scalar(event, text)
                return
        mark = event.start_mark
        self.values[pointer] = (mark.line + self.line_base, mark.column + 1)
        if frame.is_map:
            container[frame.key] = value
            frame.key = None
        else:
            container.append(value)
        frame.size += 1

    def quick(self, text: str) -> Any:
        try:
            return plain_scalar(text, self.limits.max_int_digits)
        except TooBig:
            return _SLOW  # the slow path reports it

    def slow_scalar(self, event: Any, text: str) -> None:
        pointer = self.child_pointer(event)
        if len(text) > self.limits.max_scalar_chars:
            self.fail(
                "yaml.scalar_too_large",
                f"a scalar of {len(text):,} characters; the limit is "
                f"{self.limits.max_scalar_chars:,}",
                event,
                pointer or self.stack[-1].pointer,
                hint="keep long text in the markdown body, not in the frontmatter",
            )
        if pointer is None:  # a mapping key: its source text, never resolved
            self.key(event, text, event.tag is None and event.implicit[0])
            if event.anchor is not None:
                self.define(event, text, text)
            return
        value = self.resolve(event, pointer)
        if not self.merge_frame():
            self.record(False, pointer, self.pos(event))
        self.attach(event, value, pointer, 0)
        if self.stack:
            self.stack[-1].size += 1
        if event.anchor is not None:
            self.define(event, value, text)

    def resolve(self, event: Any, pointer: str) -> Any:
        try:
            return resolve_tagged(
                event.tag, event.value, event.implicit[0], self.limits.max_int_digits
            )
        except ScalarProblem as exc:
            self.fail(exc.code, exc.message, event, pointer, hint=exc.hint)
            return None  # unreachable: `fail` raises

    def key(self, event: Any, text: str, plain: bool) -> None:
        frame = self.stack[-1]
        if plain and text in NULL:
            self.fail(
                "yaml.null_key", "a mapping key must not be empty or null", event, frame.pointer
            )
        if len(frame.container) >= self.limits.max_keys and text not in frame.container:
            self.fail(
                "yaml.too_many_keys",
                f"a mapping with more than {self.limits.max_keys:,} keys",
                event,
                frame.pointer,
            )
        frame.key = text
        if plain and text == "<<":
            frame.merging = True
            return
        child = self.pointer_for(frame, text)
        frame.child = child
        if text in frame.container:
            if text not in frame.merged:
                first = self.keys.get(child)
                where = f" (first at line {first[0]})" if first else ""
                self.fail(
                    "yaml.duplicate_key",
                    f"duplicate key {short(text)!r}{where}",
                    event,
                    child,
                    hint="each key may appear once in a mapping; remove or rename one",
                )
            if isinstance(frame.merged, set):
                frame.merged.discard(text)
        self.record(True, child, self.pos(event))

    def merge_frame(self) -> bool:
        return bool(self.stack) and self.stack[-1].is_map and self.stack[-1].merging

    def attach(self, event: Any, value: Any, pointer: str, height: int) -> None:
        """Put a finished value into the open container (or make it the root)."""
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame.height = max(frame.height, height + 1)
        if not frame.is_map:
            frame.container.append(value)
            return
        key, frame.key = frame.key, None
        if frame.merging:
            frame.merging = False
            self.merge(event, frame, value)
            return
        assert key is not None
        frame.container[key] = value

    def merge(self, event: Any, frame: Frame, value: Any) -> None:
        """`<<: *anchor` (or a list of them); explicit keys in the mapping win."""
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                self.fail("yaml.bad_merge", "'<<' must merge a mapping", event, frame.pointer)
            for key, item in source.items():
                if key not in frame.container:
                    frame.container[key] = item
                    if not isinstance(frame.merged, set):
                        frame.merged = set()
                    frame.merged.add(key)

    def start(self, event: Any, is_map: bool) -> None:
        stack = self.stack
        # The hot path: an untagged collection inside another, under the depth cap.
        if stack and event.tag is None and len(stack) < self.max_depth:
            frame = stack[-1]
            pointer: str | None = None
            if not frame.is_map:
                pointer = f"{frame.pointer}/{len(frame.container)}"
            elif frame.key is not None and not frame.merging:
                pointer = frame.child
            if pointer is not None:
                mark = event.start_mark
                self.values[pointer] = (mark.line + self.line_base, mark.column + 1)
                stack.append(Frame({} if is_map else [], pointer, event.anchor))
                return
        self.slow_start(event, is_map)

    def slow_start(self, event: Any, is_map: bool) -> None:
        pointer = self.child_pointer(event)
        if pointer is None:
            self.fail(
                "yaml.complex_key",
                "a mapping key must be a plain scalar",
                event,
                self.stack[-1].pointer,
            )
            return
        if len(self.stack) >= self.max_depth:
            self.fail(
                "yaml.too_deep",
                f"nesting is deeper than {self.max_depth} levels",
                event,
                pointer,
                hint=too_deep_hint(self.max_depth),
            )
        tag = event.tag
        expected = _MAP if is_map else _SEQ
        if tag is not None and tag != "!" and tag != expected:
            self.fail("yaml.unsupported_tag", f"unsupported tag {short(tag)!r}", event, pointer)
        if not self.merge_frame():
            self.record(False, pointer, self.pos(event))
        container: Any = {} if is_map else []
        self.stack.append(Frame(container, pointer, event.anchor))

    def end(self) -> None:
        stack = self.stack
        frame = stack.pop()
        value = frame.container
        if frame.anchor is not None:
            self.anchors[frame.anchor] = Anchor(value, None, frame.size, frame.height)
        if stack:
            parent = stack[-1]
            parent.size += frame.size
            if not parent.merging:  # the hot path of `attach`
                if parent.height <= frame.height:
                    parent.height = frame.height + 1
                if parent.is_map:
                    parent.container[parent.key] = value
                    parent.key = None
                else:
                    parent.container.append(value)
                return
        self.attach(None, value, frame.pointer, frame.height)

    def define(self, event: Any, value: Any, text: str) -> None:
        self.anchors[event.anchor] = Anchor(value, text, 1, 0)

    def alias(self, event: Any) -> None:
        anchor = self.anchors.get(event.anchor)
        if anchor is None:
            self.fail(
                "yaml.undefined_alias",
                f"found undefined alias {short(event.anchor)!r}",
                event,
                self.stack[-1].pointer if self.stack else "",
            )
            return
        pointer = self.child_pointer(event)
        if pointer is None:  # an alias used as a key
            if anchor.text is None:
                self.fail(
                    "yaml.complex_key",
                    "a mapping key must be a plain scalar",
                    event,
                    self.stack[-1].pointer,
                )
            assert anchor.text is not None
            self.key(event, anchor.text, False)
            return
        self.expanded += anchor.size
        if self.expanded > self.limits.max_alias_expansion:
            self.fail(
                "yaml.alias_bomb",
                f"aliases expand to more than {self.limits.max_alias_expansion} nodes",
                event,
                pointer,
                hint="a 'billion laughs' document; flatten the anchors or raise --max-aliases",
            )
        if len(self.stack) + anchor.height > self.max_depth:
            self.fail(
                "yaml.too_deep",
                f"nesting (through an alias) is deeper than {self.max_depth} levels",
                event,
                pointer,
            )
        if not self.merge_frame():  # values inside an alias are located at the alias
            self.record(False, pointer, self.pos(event))
        if self.stack:
            self.stack[-1].size += anchor.size
        value = anchor.value
        if isinstance(value, dict | list):
            value = copy_value(value)  # bounded: the expansion cap was checked above
        self.attach(event, value, pointer, anchor.height)


_CParser: Any
try:  # libyaml's C parser; PyYAML does not re-export it at the top level
    from yaml._yaml import CParser

    _CParser = CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None


if _CParser is None:  # pragma: no cover - PyYAML built without libyaml

    class _PyParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)

        def dispose(self) -> None:
            return None

    _CParser = _PyParser


def compose(text: str, *, line_offset: int, limits: YamlLimits) -> tuple[Any, SourceMap]:
    """Parse one YAML document into JSON data and its source map.

    Raises `YamlError` with a located diagnostic for any problem.
    """
    parser = None
    builder = Builder(line_offset, limits)
    try:
        parser = _CParser(text)
        data = builder.run(parser)
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in (exc.problem or ""):
            raise YamlError(_too_deep_ahead(exc, builder, line_offset)) from None
        raise YamlError(_syntax_diagnostic(exc, line_offset, text)) from None
    except yaml.reader.ReaderError as exc:
        before = text[: exc.position]
        raise YamlError(
            Diagnostic(
                "yaml.bad_character",
                f"character U+{exc.character:04X} is not allowed in YAML",
                line=before.count("\n") + 1 + line_offset,
                column=exc.position - (before.rfind("\n") + 1) + 1,
                hint="remove control characters from the frontmatter",
            )
        ) from None
    except yaml.YAMLError as exc:  # anything else libyaml reports
        raise YamlError(Diagnostic("yaml.syntax", str(exc)[:200], line=line_offset + 1)) from None
    finally:
        if parser is not None:
            parser.dispose()
    return data, SourceMap(builder.values, builder.keys)


def _too_deep_ahead(exc: yaml.MarkedYAMLError, builder: Builder, line_offset: int) -> Diagnostic:
    """libyaml (PyYAML >= 6.0.4) caps nesting at 1,000 levels itself, and its
    scanner reads a run of flow openers (`[[[[...`) ahead of the events the
    builder counts, so such a document meets that cap first. It is deeper
    than any limit flightdeck allows (at most HARD_MAX_DEPTH): the same
    `yaml.too_deep`, located at the value where the nesting starts."""
    mark = exc.problem_mark
    pointer = builder.child_pointer(None)
    if pointer is None:  # the deep collection is a mapping key
        pointer = builder.stack[-1].pointer
    return Diagnostic(
        "yaml.too_deep",
        f"nesting is deeper than {builder.max_depth} levels",
        pointer=pointer,
        line=(mark.line + 1 if mark else 1) + line_offset,
        column=mark.column + 1 if mark else 1,
        hint=too_deep_hint(builder.max_depth),
    )


def _syntax_diagnostic(exc: yaml.MarkedYAMLError, line_offset: int, text: str) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 + line_offset if mark else line_offset + 1
    column = mark.column + 1 if mark else 1
    problem = exc.problem or "invalid YAML"
    context = f" {exc.context}" if exc.context else ""
    code, hint = "yaml.syntax", None
    if "tab" in problem or (mark is not None and _tab_indented(text, mark.line)):
        code = "yaml.tab"
        hint = "YAML does not allow tabs for indentation; indent with spaces"
    elif "found duplicate anchor" in problem:
        code = "yaml.duplicate_anchor"
    elif "undefined alias" in problem or "found undefined alias" in problem:
        code = "yaml.undefined_alias"
    message = f"{problem}{context}".strip()
    return Diagnostic(code, message, line=line, column=column, hint=hint)


def _tab_indented(text: str, line_index: int) -> bool:
    start = 0
    for _ in range(line_index):  # find the line without splitting the whole text
        start = text.find("\n", start) + 1
        if start == 0:
            return False
    end = text.find("\n", start)
    line = text[start : end if end != -1 else len(text)]
    return "\t" in line[: len(line) - len(line.lstrip())]
