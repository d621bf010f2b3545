"""JSON's surrogate-pair escapes inside YAML double-quoted scalars.

A JSON encoder that escapes non-ASCII text (`json.dumps`' default) writes a
character beyond the BMP as a UTF-16 surrogate pair, `"\\ud83d\\udca9"`, and
every JSON reader combines the pair into that one character. JSON is meant
to be YAML 1.2, but libyaml refuses each half of the pair ("found invalid
Unicode character escape code"), so a JSON frontmatter as `json.dumps` wrote
it would not load. When libyaml refuses such an escape, `combine_pairs`
rewrites every high-then-low pair inside a double-quoted scalar as the one
escape YAML has for that character (`\\U0001f4a9`), and `Shifts` moves the
positions found in the rewritten text back to the columns of the file (the
rewrite is two characters shorter per pair). A lone half, or a pair in the
wrong order, is left alone and stays libyaml's error, as a string holding a
lone surrogate could not be written as UTF-8 anyway.

Where the double-quoted scalars are is decided by PyYAML's own scanner (the
pure-Python one, which reads any escape); inside a scalar, the one regular
expression below takes escapes from left to right, so `\\\\ud83d` (an escaped
backslash, then text) is never taken for an escape. This path runs only for
a document libyaml has already refused, and its cost is linear in its size.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace

import yaml

from flightdeck.documents._diagnostics import Diagnostic
from flightdeck.documents._document import SourceMap

# One escape at a time, from the left: a surrogate pair, or any other escape
# (`\\` included) taken whole so the next match starts after it.
_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|.)", re.DOTALL
)
_SAVED = len("\\ud83d\\udca9") - len("\\U0001f4a9")


class Shifts:
    """Per line of the rewritten text (0-based), the columns (0-based) where
    a rewritten pair ends; each moves what follows it two columns right."""

    def __init__(self) -> None:
        self.ends: dict[int, list[int]] = {}

    def column(self, line: int, column: int) -> int:
        """The file's 1-based column of a 1-based `column` on 0-based `line`
        of the rewritten text."""
        ends = self.ends.get(line)
        if not ends:
            return column
        return column + _SAVED * bisect_right(ends, column - 1)

    def source_map(self, source: SourceMap, line_base: int) -> SourceMap:
        """`source`'s positions (1-based lines, plus `line_base`) moved back."""

        def moved(table: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
            return {
                pointer: (line, self.column(line - 1 - line_base, column))
                for pointer, (line, column) in table.items()
            }

        return SourceMap(moved(source.values), moved(source.keys))

    def diagnostic(self, diagnostic: Diagnostic, line_base: int) -> Diagnostic:
        if diagnostic.line is None or diagnostic.column is None:
            return diagnostic
        column = self.column(diagnostic.line - 1 - line_base, diagnostic.column)
        return replace(diagnostic, column=column)


def combine_pairs(text: str) -> tuple[str, Shifts] | None:
    """`text` with every surrogate pair escape of its double-quoted scalars
    written as one `\\U` escape, and the shifts; None when there is none to
    combine, or when PyYAML's scanner cannot read the text either."""
    try:
        spans = [
            (token.start_mark.index, token.end_mark.index)
            for token in yaml.scan(text, Loader=yaml.SafeLoader)
            if isinstance(token, yaml.ScalarToken) and token.style == '"'
        ]
    except yaml.YAMLError:
        return None
    pieces: list[str] = []
    shifts = Shifts()
    done = 0  # text[:done] is in `pieces`
    line, line_start = 0, 0  # of the rewritten text, at `done`
    written = 0  # length of the rewritten text so far
    for start, end in spans:
        for match in _ESCAPE.finditer(text, start, end):
            if match.group(1) is None:
                continue
            high, low = int(match.group(1), 16), int(match.group(2), 16)
            code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            before = text[done : match.start()]
            pieces.append(before)
            newlines = before.count("\n")
            if newlines:
                line += newlines
                line_start = written + before.rfind("\n") + 1
            written += len(before)
            escape = f"\\U{code:08x}"
            pieces.append(escape)
            written += len(escape)
            shifts.ends.setdefault(line, []).append(written - line_start)
            done = match.end()
    if not shifts.ends:
        return None
    pieces.append(text[done:])
    return "".join(pieces), shifts


__all__ = ["Shifts", "combine_pairs"]
