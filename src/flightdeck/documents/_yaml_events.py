"""The event-stream builder behind `_yaml.compose`: JSON data and positions.

Values are built from parser events with an explicit stack, so nothing
recurses per nesting level, and every cap is checked on the event that
breaks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yaml import events as ev

from flightdeck.documents._diagnostics import Diagnostic, pointer_join
from flightdeck.documents._yaml_scalars import EXPLICIT, NULL, TooBig, plain_scalar, short

_SLOW = object()  # `quick` could not decide: take the general path
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"

# Hard ceiling on nesting whatever the user asks for: the schema validators
# that read the data afterwards recurse once per level.
HARD_MAX_DEPTH = 128


@dataclass(frozen=True)
class YamlLimits:
    max_depth: int = 64
    max_alias_expansion: int = 10_000  # nodes produced through aliases, in total
    max_scalar_chars: int = 1024 * 1024
    max_int_digits: int = 100  # far below CPython's int-from-text limit (4,300 digits)
    max_keys: int = 10_000  # per mapping


class YamlError(Exception):
    """A problem that stops parsing; carries one located diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass
class _Anchor:
    value: Any
    text: str | None  # a scalar's source text, for use as a mapping key
    size: int  # nodes the anchored value holds
    height: int  # nesting levels (0 for a scalar)


class _Frame:
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
        self.merged: set[str] = set()
        self.height = 1
        self.size = 1


class Builder:
    """Consumes parser events into JSON data and a source map."""

    def __init__(self, line_offset: int, limits: YamlLimits) -> None:
        self.line_base = line_offset + 1  # libyaml lines are 0-based
        self.limits = limits
        self.max_depth = min(limits.max_depth, HARD_MAX_DEPTH)
        self.values: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}
        self.stack: list[_Frame] = []
        self.anchors: dict[str, _Anchor] = {}
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
        documents = 0
        while True:
            event = parser.get_event()
            cls = event.__class__
            if cls is ev.ScalarEvent:
                self.scalar(event)
            elif cls is ev.MappingStartEvent or cls is ev.SequenceStartEvent:
                self.start(event, cls is ev.MappingStartEvent)
            elif cls is ev.MappingEndEvent or cls is ev.SequenceEndEvent:
                self.end()
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
    def pointer_for(frame: _Frame, key: str) -> str:
        if "/" in key or "~" in key:
            return pointer_join(frame.pointer, key)
        return f"{frame.pointer}/{key}"

    def scalar(self, event: Any) -> None:
        text = event.value
        stack = self.stack
        # The hot path: an untagged, unanchored value inside a container.
        if stack and event.anchor is None and len(text) <= self.limits.max_scalar_chars:
            frame = stack[-1]
            if frame.is_map:
                key = frame.key
                if key is None:  # a mapping key: its source text, never resolved
                    self.key(event, text, event.tag is None and event.implicit[0])
                    return
                if event.tag is None and not frame.merging:
                    value = self.quick(event, text)
                    if value is not _SLOW:
                        mark = event.start_mark
                        self.values[frame.child] = (mark.line + self.line_base, mark.column + 1)
                        frame.container[key] = value
                        frame.key = None
                        frame.size += 1
                        return
            elif event.tag is None:
                value = self.quick(event, text)
                if value is not _SLOW:
                    mark = event.start_mark
                    pointer = f"{frame.pointer}/{len(frame.container)}"
                    self.values[pointer] = (mark.line + self.line_base, mark.column + 1)
                    frame.container.append(value)
                    frame.size += 1
                    return
        self.slow_scalar(event, text)

    def quick(self, event: Any, text: str) -> Any:
        if not event.implicit[0]:
            return text
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
        tag, text = event.tag, event.value
        try:
            if tag is None or tag == "!":
                return plain_scalar(text, self.limits.max_int_digits) if event.implicit[0] else text
            convert = EXPLICIT.get(tag)
            if convert is not None:
                if convert is int and len(text) > self.limits.max_int_digits:
                    raise TooBig
                try:
                    return convert(text)
                except ValueError:
                    self.fail(
                        "yaml.bad_scalar", f"{short(text)!r} is not a valid {tag}", event, pointer
                    )
            resolved = plain_scalar(text, self.limits.max_int_digits)
        except TooBig:
            self.fail(
                "yaml.number_too_large",
                f"an integer of more than {self.limits.max_int_digits} digits",
                event,
                pointer,
                hint="quote it if it is an identifier rather than a number",
            )
        if tag == "tag:yaml.org,2002:bool" and isinstance(resolved, bool):
            return resolved
        if tag == "tag:yaml.org,2002:null" and resolved is None:
            return None
        self.fail(
            "yaml.unsupported_tag",
            f"unsupported tag {short(tag)!r}",
            event,
            pointer,
            hint="manifests hold plain JSON data: strings, numbers, booleans, null, lists, maps",
        )
        return None  # unreachable

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

    def merge(self, event: Any, frame: _Frame, value: Any) -> None:
        """`<<: *anchor` (or a list of them); explicit keys in the mapping win."""
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                self.fail("yaml.bad_merge", "'<<' must merge a mapping", event, frame.pointer)
            for key, item in source.items():
                if key not in frame.container:
                    frame.container[key] = item
                    frame.merged.add(key)

    def start(self, event: Any, is_map: bool) -> None:
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
                hint="raise the limit with --max-depth if this is intended"
                if self.max_depth < HARD_MAX_DEPTH
                else f"{HARD_MAX_DEPTH} levels is the most flightdeck reads",
            )
        tag = event.tag
        expected = _MAP if is_map else _SEQ
        if tag is not None and tag != "!" and tag != expected:
            self.fail("yaml.unsupported_tag", f"unsupported tag {short(tag)!r}", event, pointer)
        if not self.merge_frame():
            self.record(False, pointer, self.pos(event))
        container: Any = {} if is_map else []
        frame = _Frame(container, pointer, event.anchor)
        frame.size = 1
        self.stack.append(frame)

    def end(self) -> None:
        frame = self.stack.pop()
        value = frame.container
        if self.stack:
            self.stack[-1].size += frame.size
        if frame.anchor is not None:
            self.anchors[frame.anchor] = _Anchor(value, None, frame.size, frame.height)
        self.attach(None, value, frame.pointer, frame.height)

    def define(self, event: Any, value: Any, text: str) -> None:
        self.anchors[event.anchor] = _Anchor(value, text, 1, 0)

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
            value = _copy(value)  # bounded: the expansion cap was checked above
        self.attach(event, value, pointer, anchor.height)


def _copy(value: Any) -> Any:
    """A copy of JSON data; recursion is bounded by the depth cap."""
    if isinstance(value, dict):
        return {k: _copy(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    return [_copy(v) if isinstance(v, dict | list) else v for v in value]
