"""The general path of the YAML builder: every event the hot loop hands over.

`_yaml_events.Builder.run` handles the common events inline (an untagged,
unanchored scalar or collection inside a container, under every cap);
everything else, and every failure, comes here. Both read and write the
same state (the stack of open collections, the source map, the anchors).
"""

from __future__ import annotations

from typing import Any

from flightdeck.documents._diagnostics import Diagnostic, pointer_join
from flightdeck.documents._yaml_scalars import NULL, ScalarProblem, resolve_tagged, short
from flightdeck.documents._yaml_state import (
    HARD_MAX_DEPTH,
    Anchor,
    Frame,
    YamlError,
    YamlLimits,
    copy_value,
    too_deep_hint,
)

_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


class GeneralPath:
    """The builder's state, and its handling of every event the hot loop in
    `_yaml_events.Builder.run` does not take: anything tagged, anchored,
    aliased, merged, at the root, or breaking a cap."""

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
        self.documents = 0

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

    def slow_scalar(self, event: Any, text: str) -> None:
        pointer = self.child_pointer(event)
        if len(text) > self.limits.max_scalar_chars:
            self.fail(
                "yaml.scalar_too_large",
                f"a scalar of {len(text):,} characters; the limit is "
                f"{self.limits.max_scalar_chars:,}",
                event,
                self.stack[-1].pointer if pointer is None else pointer,
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
        merging = self.merge_frame()
        if not merging:
            self.record(False, pointer, self.pos(event))
        container: Any = {} if is_map else []
        frame = Frame(container, pointer, event.anchor)
        if merging:  # a `<<` value that is not an alias: a bad merge is located here
            frame.event = event
        self.stack.append(frame)

    def end(self) -> None:
        """A collection's end: its anchor defined, its size added to the open
        collection's, and its value attached."""
        done = self.stack.pop()
        if done.anchor is not None:
            self.anchors[done.anchor] = Anchor(done.container, None, done.size, done.height)
        if self.stack:
            self.stack[-1].size += done.size
        self.attach(done.event, done.container, done.pointer, done.height)

    def start_document(self, event: Any) -> None:
        self.documents += 1
        if self.documents > 1:
            self.fail(
                "yaml.syntax",
                "expected a single document in the frontmatter",
                event,
                "",
                hint="remove the second document ('...' or '---' inside the block)",
            )

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
