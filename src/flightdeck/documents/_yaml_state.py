"""The builder's state: caps, the error it raises, open collections, anchors.

Kept apart from `_yaml_events`, whose event handlers are the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flightdeck.documents._diagnostics import Diagnostic

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
        "event",
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
        self.event: Any = None  # the start event of a `<<` value, to locate a bad merge


def copy_value(value: Any) -> Any:
    """A copy of JSON data; recursion is bounded by the depth cap."""
    if isinstance(value, dict):
        return {k: copy_value(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    return [copy_value(v) if isinstance(v, dict | list) else v for v in value]
