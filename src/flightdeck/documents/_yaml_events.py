"""The event-stream builder behind `_yaml.compose`: JSON data and positions.

Values are built from parser events with an explicit stack, so nothing
recurses per nesting level, and every cap is checked on the event that
breaks it.

`Builder.run` is the hot path (about 110 events per manifest, ~0.4 us of
Python each on top of libyaml's own cost): the common events, an untagged,
unanchored scalar or collection inside a container, under every cap, are
handled inline, with the open collection held in a local, so each costs no
method call. Anything else, and every failure, goes to the general path in
`_yaml_general`, which reads and writes the same state; the inline code
decides nothing that path would decide differently (tests/documents/
test_yaml_differential.py checks this loop against one that sends every
event down the general path).
"""

from __future__ import annotations

from typing import Any

from yaml import events as ev

from flightdeck.documents._yaml_general import GeneralPath
from flightdeck.documents._yaml_scalars import NULL, SCALAR_STARTS, TooBig, plain_scalar
from flightdeck.documents._yaml_state import Anchor, Frame

__all__ = ["Builder"]


class Builder(GeneralPath):
    """Consumes parser events into JSON data and a source map."""

    def run(self, parser: Any) -> Any:
        # Everything the loop reads per event is bound to a local once.
        get_event = parser.get_event
        stack = self.stack
        values, keys = self.values, self.keys
        line_base = self.line_base
        max_chars, max_keys, max_depth = self.max_chars, self.max_keys, self.max_depth
        max_digits = self.limits.max_int_digits
        starts, null = SCALAR_STARTS, NULL
        scalar_event, mapping_start, sequence_start = (
            ev.ScalarEvent,
            ev.MappingStartEvent,
            ev.SequenceStartEvent,
        )
        mapping_end, sequence_end = ev.MappingEndEvent, ev.SequenceEndEvent
        frame: Frame | None = None  # the open collection: stack[-1], or None at the root
        while True:
            event = get_event()
            cls = event.__class__
            # Tested in order of frequency: scalars, then collection ends and starts.
            if cls is scalar_event:
                text = event.value
                if (
                    frame is None
                    or event.anchor is not None
                    or event.tag is not None
                    or len(text) > max_chars
                ):
                    self.slow_scalar(event, text)
                    continue
                container = frame.container
                is_map = frame.is_map
                if is_map:
                    if frame.key is None:  # a mapping key: its source text, never resolved
                        if (
                            text not in container
                            and text not in null
                            and text != "<<"
                            and "/" not in text
                            and "~" not in text
                            and len(container) < max_keys
                        ):
                            child = frame.pointer + "/" + text
                            frame.key = text
                            frame.child = child
                            mark = event.start_mark
                            keys[child] = (mark.line + line_base, mark.column + 1)
                        else:
                            self.slow_scalar(event, text)
                        continue
                    if frame.merging:
                        self.slow_scalar(event, text)
                        continue
                    pointer = frame.child
                else:
                    pointer = f"{frame.pointer}/{len(container)}"
                value: Any = text  # quoted or block text, or an ordinary word
                if event.implicit[0] and (not text or text[0] in starts):
                    try:
                        value = plain_scalar(text, max_digits)
                    except TooBig:  # the general path reports it
                        self.slow_scalar(event, text)
                        continue
                mark = event.start_mark
                values[pointer] = (mark.line + line_base, mark.column + 1)
                if is_map:
                    container[frame.key] = value
                    frame.key = None
                else:
                    container.append(value)
                frame.size += 1
            elif cls is mapping_end or cls is sequence_end:
                if len(stack) < 2 or stack[-2].merging:  # the root, or a `<<` value
                    self.end()
                    frame = stack[-1] if stack else None
                    continue
                done = stack.pop()  # `end`, with the common case of `attach` inline
                value = done.container
                if done.anchor is not None:
                    self.anchors[done.anchor] = Anchor(value, None, done.size, done.height)
                frame = stack[-1]
                frame.size += done.size
                if frame.height <= done.height:
                    frame.height = done.height + 1
                if frame.is_map:
                    frame.container[frame.key] = value
                    frame.key = None
                else:
                    frame.container.append(value)
            elif cls is mapping_start or cls is sequence_start:
                if frame is not None and event.tag is None and len(stack) < max_depth:
                    if not frame.is_map:
                        pointer = f"{frame.pointer}/{len(frame.container)}"
                    elif frame.key is not None and not frame.merging:
                        pointer = frame.child
                    else:  # a collection as a key, or a `<<` value
                        self.slow_start(event, cls is mapping_start)
                        frame = stack[-1]
                        continue
                    mark = event.start_mark
                    values[pointer] = (mark.line + line_base, mark.column + 1)
                    frame = Frame({} if cls is mapping_start else [], pointer, event.anchor)
                    stack.append(frame)
                    continue
                self.slow_start(event, cls is mapping_start)
                frame = stack[-1]
            elif cls is ev.AliasEvent:
                self.alias(event)
            elif cls is ev.DocumentStartEvent:
                self.start_document(event)
            elif cls is ev.StreamEndEvent:
                return self.root
