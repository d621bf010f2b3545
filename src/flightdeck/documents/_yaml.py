"""YAML to plain JSON data, with YAML 1.2 scalar rules and source positions.

libyaml (through PyYAML's C parser) only tokenises and parses: this module
reads its *event stream* and builds values itself, with an explicit stack,
instead of letting PyYAML compose a node graph first. libyaml's composer
recurses once per nesting level (40,000 nested `[` overflow the C stack) and
every cap checked after composing comes too late; here each cap is checked on
the event that breaks it, so the cost of any input is linear in its size and
nothing recurses. In one pass this gives:

- YAML 1.2 core-schema scalars: only `true`/`false` are booleans, so `on`,
  `off`, `yes`, `no`, `y`, `n` stay strings; timestamps stay strings;
- duplicate mapping keys as errors;
- caps on nesting depth, alias expansion ("billion laughs"), scalar size,
  integer digits and keys per mapping, refused while parsing;
- the 1-based line and column of every key and value, by JSON pointer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from flightdeck.documents._diagnostics import Diagnostic
from flightdeck.documents._document import SourceMap
from flightdeck.documents._yaml_events import Builder
from flightdeck.documents._yaml_state import HARD_MAX_DEPTH, YamlError, YamlLimits, too_deep_hint

if TYPE_CHECKING:
    from flightdeck.documents._yaml_surrogates import Shifts

_CParser: Any
try:  # libyaml's C parser; PyYAML does not re-export it at the top level
    from yaml._yaml import CParser

    _CParser = CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None

__all__ = ["HARD_MAX_DEPTH", "YamlError", "YamlLimits", "compose"]

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
        if exc.problem == "found invalid Unicode character escape code":
            # Imported here: only a document libyaml refused pays for it.
            from flightdeck.documents import _yaml_surrogates as _surrogates

            combined = _surrogates.combine_pairs(text)
            if combined is not None:
                return _compose_combined(*combined, line_offset=line_offset, limits=limits)
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


def _compose_combined(
    text: str, shifts: Shifts, *, line_offset: int, limits: YamlLimits
) -> tuple[Any, SourceMap]:
    """`compose` of a text whose surrogate pairs were combined, with every
    position (and a later error's) moved back to the file's columns."""
    try:
        data, source = compose(text, line_offset=line_offset, limits=limits)
    except YamlError as exc:
        raise YamlError(shifts.diagnostic(exc.diagnostic, line_offset)) from None
    return data, shifts.source_map(source, line_offset)


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
