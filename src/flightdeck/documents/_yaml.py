"""YAML to plain JSON data, with YAML 1.2 scalar rules and source positions.

libyaml (through PyYAML's C parser) composes the node graph; this module
turns nodes into values itself instead of using PyYAML's constructors, which
gives, in one pass:

- YAML 1.2 core-schema scalars: only `true`/`false` are booleans, so `on`,
  `off`, `yes`, `no`, `y`, `n` stay strings; timestamps stay strings;
- duplicate mapping keys as errors;
- a cap on alias expansion ("billion laughs") and on nesting depth;
- the 1-based line and column of every key and value, by JSON pointer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from flightdeck.documents._diagnostics import Diagnostic, pointer_join
from flightdeck.documents._document import SourceMap

_CParser: Any
try:  # libyaml's C parser; PyYAML does not re-export it at the top level
    from yaml._yaml import CParser

    _CParser = CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None
_PLAIN = "tag:flightdeck,plain"  # implicit tag for unquoted scalars; resolved below
_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"

# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT10 = re.compile(r"[-+]?[0-9]+\Z")
_INT8 = re.compile(r"0o[0-7]+\Z")
_INT16 = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")


@dataclass(frozen=True)
class YamlLimits:
    max_depth: int = 64
    max_alias_expansion: int = 10_000  # nodes produced through aliases, in total


class YamlError(Exception):
    """A problem that stops parsing; carries one located diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class _Resolver(yaml.resolver.BaseResolver):
    """Marks every plain scalar so `_scalar` applies YAML 1.2 rules to it."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP

    # Path resolvers are unused; skipping their bookkeeping per node is a
    # measurable share of parse time on large corpora.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


if _CParser is not None:

    class _Loader(_CParser, _Resolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _Resolver.__init__(self)

else:  # pragma: no cover - PyYAML built without libyaml

    class _Loader(  # type: ignore[no-redef]
        yaml.reader.Reader,
        yaml.scanner.Scanner,
        yaml.parser.Parser,
        yaml.composer.Composer,
        _Resolver,
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            _Resolver.__init__(self)


# First characters a non-string plain scalar can start with.
_SCALAR_STARTS = frozenset("0123456789+-.~nNtTfF")


def _plain_scalar(text: str) -> Any:
    if text and text[0] not in _SCALAR_STARTS:
        return text  # the common case: an ordinary word
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT10.match(text):
        return int(text)
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text[0] == "-" else math.inf
    if _NAN.match(text):
        return math.nan
    return text


_EXPLICIT = {
    "tag:yaml.org,2002:str": str,
    "tag:yaml.org,2002:int": int,
    "tag:yaml.org,2002:float": float,
}


class _Builder:
    """Walks a composed node graph into JSON data and a source map."""

    def __init__(self, line_offset: int, limits: YamlLimits) -> None:
        self.line_offset = line_offset
        self.line_base = line_offset + 1  # libyaml lines are 0-based
        self.limits = limits
        self.values: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}
        self.seen: set[int] = set()
        self.expanded = 0
        self.diagnostics: list[Diagnostic] = []

    def pos(self, node: Node) -> tuple[int, int]:
        mark = node.start_mark
        return (mark.line + 1 + self.line_offset, mark.column + 1)

    def fail(
        self, code: str, message: str, node: Node, pointer: str, hint: str | None = None
    ) -> None:
        line, col = self.pos(node)
        raise YamlError(
            Diagnostic(code, message, pointer=pointer, line=line, column=col, hint=hint)
        )

    def build(self, node: Node, pointer: str, depth: int) -> Any:
        mark = node.start_mark
        self.values[pointer] = (mark.line + self.line_base, mark.column + 1)
        if node.__class__ is ScalarNode:  # the hot path: most nodes are scalars
            tag = node.tag
            if tag == _PLAIN:
                return _plain_scalar(node.value)
            if tag == _STR:
                return node.value
            return self.scalar(node, pointer)
        self.enter(node, pointer, depth)
        if isinstance(node, SequenceNode):
            self.check_tag(node, _SEQ, pointer)
            return [
                self.build(item, f"{pointer}/{i}", depth + 1) for i, item in enumerate(node.value)
            ]
        assert isinstance(node, MappingNode)
        self.check_tag(node, _MAP, pointer)
        return self.mapping(node, pointer, depth)

    def enter(self, node: Node, pointer: str, depth: int) -> None:
        """Depth and alias-expansion caps, checked on containers only: a
        scalar reached through an alias costs one value, a container its
        whole subtree."""
        if depth >= self.limits.max_depth:
            self.fail(
                "yaml.too_deep",
                f"nesting is deeper than {self.limits.max_depth} levels",
                node,
                pointer,
                hint="raise the limit with --max-depth if this is intended",
            )
        if id(node) in self.seen:  # reached again through an alias
            self.expanded += len(node.value) + 1
            if self.expanded > self.limits.max_alias_expansion:
                self.fail(
                    "yaml.alias_bomb",
                    f"aliases expand to more than {self.limits.max_alias_expansion} nodes",
                    node,
                    pointer,
                    hint="a 'billion laughs' document; flatten the anchors or raise --max-aliases",
                )
        else:
            self.seen.add(id(node))

    def check_tag(self, node: Node, expected: str, pointer: str) -> None:
        if node.tag != expected:
            self.fail("yaml.unsupported_tag", f"unsupported tag {node.tag!r}", node, pointer)

    def scalar(self, node: ScalarNode, pointer: str) -> Any:
        if node.tag == _PLAIN:
            return _plain_scalar(node.value)
        if node.tag == _STR:
            return node.value
        convert = _EXPLICIT.get(node.tag)
        if convert is not None:
            try:
                return convert(node.value)
            except ValueError:
                self.fail(
                    "yaml.bad_scalar", f"{node.value!r} is not a valid {node.tag}", node, pointer
                )
        resolved = _plain_scalar(node.value)
        if node.tag == "tag:yaml.org,2002:bool" and isinstance(resolved, bool):
            return resolved
        if node.tag == "tag:yaml.org,2002:null" and resolved is None:
            return None
        self.fail(
            "yaml.unsupported_tag",
            f"unsupported tag {node.tag!r}",
            node,
            pointer,
            hint="manifests hold plain JSON data: strings, numbers, booleans, null, lists, maps",
        )
        return None  # unreachable

    def key_text(self, node: Node, pointer: str) -> str:
        if node.__class__ is ScalarNode and node.tag != _PLAIN:
            return str(node.value)  # quoted: any text is a fine key
        if not isinstance(node, ScalarNode):
            self.fail("yaml.complex_key", "a mapping key must be a plain scalar", node, pointer)
        assert isinstance(node, ScalarNode)
        if node.tag == _PLAIN and node.value in _NULL:
            self.fail("yaml.null_key", "a mapping key must not be empty or null", node, pointer)
        # JSON object keys are strings: `200:` and `true:` keep their text.
        return str(node.value)

    def mapping(self, node: MappingNode, pointer: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: set[str] = set()
        keys, base = self.keys, self.line_base
        for key_node, value_node in node.value:
            value = key_node.value
            if key_node.__class__ is ScalarNode and isinstance(value, str) and value not in _NULL:
                key = value  # the common case: a plain or quoted word
                if key == "<<" and key_node.tag == _PLAIN:
                    self.merge(out, merged, value_node, pointer, depth)
                    continue
            else:
                key = self.key_text(key_node, pointer)
            plain = "/" not in key and "~" not in key
            child = f"{pointer}/{key}" if plain else pointer_join(pointer, key)
            if key in out:
                if key not in merged:
                    self.duplicate(key, key_node, child)
                merged.discard(key)
            mark = key_node.start_mark
            keys[child] = (mark.line + base, mark.column + 1)
            out[key] = self.build(value_node, child, depth + 1)
        return out

    def duplicate(self, key: str, key_node: Node, child: str) -> None:
        first = self.keys.get(child)
        where = f" (first at line {first[0]})" if first else ""
        self.fail(
            "yaml.duplicate_key",
            f"duplicate key {key!r}{where}",
            key_node,
            child,
            hint="each key may appear once in a mapping; remove or rename one",
        )

    def merge(
        self, out: dict[str, Any], merged: set[str], value: Node, pointer: str, depth: int
    ) -> None:
        """`<<: *anchor` merge keys; explicit keys in the mapping win."""
        sources = value.value if isinstance(value, SequenceNode) else [value]
        for source in sources:
            data = self.build(source, pointer, depth + 1)
            if not isinstance(data, dict):
                self.fail("yaml.bad_merge", "'<<' must merge a mapping", source, pointer)
            for key, item in data.items():
                if key not in out:
                    out[key] = item
                    merged.add(key)


def compose(text: str, *, line_offset: int, limits: YamlLimits) -> tuple[Any, SourceMap]:
    """Parse one YAML document into JSON data and its source map.

    Raises `YamlError` with a located diagnostic for any problem.
    """
    loader = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
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
        raise YamlError(Diagnostic("yaml.syntax", str(exc), line=line_offset + 1)) from None
    except RecursionError:
        raise YamlError(
            Diagnostic(
                "yaml.too_deep",
                "nesting is too deep to parse",
                line=line_offset + 1,
                column=1,
                hint="flatten the document",
            )
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        return None, SourceMap()
    builder = _Builder(line_offset, limits)
    try:
        data = builder.build(node, "", 0)
    except RecursionError:
        raise YamlError(
            Diagnostic("yaml.too_deep", "nesting is too deep", line=line_offset + 1)
        ) from None
    return data, SourceMap(builder.values, builder.keys)


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
    lines = text.split("\n")
    if line_index >= len(lines):
        return False
    line = lines[line_index]
    return "\t" in line[: len(line) - len(line.lstrip())]
