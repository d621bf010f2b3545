"""A line-based fast path for the block YAML most frontmatter is written in.

`compose` tries this first. It reads only a narrow, regular subset: block
mappings with plain keys, block sequences, plain scalars (folded across
lines), single-quoted scalars, double-quoted scalars without escapes, and
the empty `{}` and `[]`. Anything outside that subset, or anything that
could be an error (duplicate or null keys, a cap reached, tabs, comments,
blank lines, unusual characters, anchors, tags, flow collections, block
scalars), gives up, and the event-stream builder reads the document from
the start. So this path never reports an error: values, positions and
diagnostics are those of the general path, which
tests/documents/test_yaml_fast.py checks on generated and hostile input.

Scalars are resolved by the same `plain_scalar` as the general path.
"""

from __future__ import annotations

import re
from typing import Any

from flightdeck.documents._document import SourceMap
from flightdeck.documents._yaml_scalars import NULL, SCALAR_STARTS, TooBig, plain_scalar
from flightdeck.documents._yaml_state import HARD_MAX_DEPTH, YamlLimits

__all__ = ["fast_compose"]

# Only characters libyaml reads as ordinary text: no tab, CR, NEL, BOM,
# U+2028/U+2029 (line breaks to libyaml), controls or surrogates.
_PLAIN_TEXT = re.compile(
    "[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)
# One row per line: indent, `- ` (with its spaces), then `key:` with the
# spaces and value after it, or else the rest of the line. A key starts with
# no indicator and holds no `:` or `#`.
_ROW = re.compile(
    r"^( *)(-(?: +|$))?"
    r"(?:([^\s\-?:,\[\]{}#&*!|>'\"%@`.][^:#\n]*)(?<! ):(?:( +)(.+))?|(.*))$",
    re.MULTILINE,
)
# Characters that may not start a plain scalar here (indicators, quotes, space).
_NOT_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@` ")
_SINGLE_CLOSED = re.compile(r"((?:[^']|'')*)'\Z")
_SINGLE_OPEN = re.compile(r"(?:[^']|'')*\Z")
# Double-quoted text without escapes: anything with a backslash gives up.
_DOUBLE_CLOSED = re.compile(r'([^"\\]*)"\Z')
_DOUBLE_OPEN = re.compile(r'[^"\\]*\Z')
# Deeper documents are rare; the general path reads them (and their caps).
_MAX_FAST_DEPTH = 32
# libyaml refuses a plain (simple) key longer than 1,024 characters; longer
# keys, and those near the limit, are left to it.
_MAX_KEY_CHARS = 1000
# Keys the general path refuses (null) or treats specially (`<<` merges).
_REFUSED_KEYS = NULL | {"<<"}


# Resolved plain scalars, shared across documents: most repeat (`true`, `1`).
_PLAIN_CACHE: dict[str, Any] = {}
_CACHED_CHARS = 32
_MISSING = object()


class _GiveUp(Exception):
    """The document is outside the fast subset: use the general path."""


def fast_compose(text: str, line_offset: int, limits: YamlLimits) -> tuple[Any, SourceMap] | None:
    """The document's data and source map, or None to use the general path."""
    if (
        not text
        or len(text) > limits.max_scalar_chars  # so no scalar in it breaks that cap
        or "#" in text
        or "\n\n" in text
        or " \n" in text
        or text[0] == " "
        or text[-1] == " "
        or not _PLAIN_TEXT.fullmatch(text)
    ):
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if max(map(len, lines)) > _MAX_KEY_CHARS:  # so no key can be too long
        return None
    rows = _ROW.findall(text)  # one per line, then an empty one after a last `\n`
    del rows[len(lines) :]
    if len(rows) != len(lines) or not rows[0][2] or rows[0][1]:
        return None
    indents = [len(row[0]) for row in rows]
    indents.append(-1)  # past the last line: ends every open collection and scalar
    reader = _Reader(lines, rows, indents, line_offset + 1, limits)
    try:
        data, end = reader.mapping(0, 0, "", 1)
    except (_GiveUp, TooBig):
        return None
    if end != len(lines):
        return None
    return data, SourceMap(reader.values, reader.keys)


Row = tuple[str, str, str, str, str, str]  # indent, dash, key, spaces, value, other


class _Reader:
    def __init__(
        self,
        lines: list[str],
        rows: list[Row],
        indents: list[int],
        line_base: int,
        limits: YamlLimits,
    ) -> None:
        self.lines = lines
        self.rows = rows
        self.indents = indents
        self.base = line_base
        self.max_depth = min(limits.max_depth, HARD_MAX_DEPTH, _MAX_FAST_DEPTH)
        self.max_keys = limits.max_keys
        self.max_digits = limits.max_int_digits
        self.values: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}

    def plain(self, text: str) -> Any:
        """`plain_scalar`, remembered for short texts (`true`, `1`, `null`...)."""
        value = _PLAIN_CACHE.get(text, _MISSING)
        if value is _MISSING:
            value = plain_scalar(text, self.max_digits)
            # Short texts cannot break any digit cap of 32 or more.
            if len(text) <= _CACHED_CHARS <= self.max_digits and len(_PLAIN_CACHE) < 4096:
                _PLAIN_CACHE[text] = value
        elif self.max_digits < _CACHED_CHARS:
            value = plain_scalar(text, self.max_digits)
        return value

    def mapping(self, i: int, col: int, pointer: str, depth: int) -> tuple[dict[str, Any], int]:
        """A block mapping whose first key is on row i at column col."""
        if depth > self.max_depth:
            raise _GiveUp
        rows, indents, n, base = self.rows, self.indents, len(self.rows), self.base
        values, keys = self.values, self.keys
        column = col + 1
        values[pointer] = (i + base, column)
        prefix = pointer + "/"
        out: dict[str, Any] = {}
        row = rows[i]
        while True:
            key = row[2]
            if key in out or key in _REFUSED_KEYS:  # "" (no key) is in it too
                raise _GiveUp
            if "/" in key or "~" in key:
                child = prefix + key.replace("~", "~0").replace("/", "~1")
            else:
                child = prefix + key
            keys[child] = (i + base, column)
            value = row[4]
            if value:
                i += 1
                if (
                    value[0] not in _NOT_FIRST
                    and indents[i] <= col  # no continuation line
                    and ": " not in value
                    and value[-1] != ":"
                ):  # the common case: a one-line plain scalar
                    values[child] = (i - 1 + base, column + len(key) + 1 + len(row[3]))
                    out[key] = value if value[0] not in SCALAR_STARTS else self.plain(value)
                else:
                    vcol = col + len(key) + 1 + len(row[3])
                    out[key], i = self.scalar(i - 1, vcol, value, col, child, depth)
            else:  # the value is a block collection on the next rows
                i += 1
                if i >= n:
                    raise _GiveUp  # a null value: left to the general path
                ind = indents[i]
                if rows[i][1] and ind >= col:
                    out[key], i = self.sequence(i, ind, child, depth + 1)
                elif ind > col:
                    if rows[i][1]:
                        raise _GiveUp
                    out[key], i = self.mapping(i, ind, child, depth + 1)
                else:
                    raise _GiveUp
            if indents[i] < col:
                if len(out) > self.max_keys:  # no key repeats, so it grew past the cap
                    raise _GiveUp
                return out, i
            row = rows[i]
            if indents[i] > col or row[1]:
                raise _GiveUp

    def sequence(self, i: int, col: int, pointer: str, depth: int) -> tuple[list[Any], int]:
        """A block sequence whose first `- ` is on row i at column col."""
        if depth > self.max_depth:
            raise _GiveUp
        rows, indents, base = self.rows, self.indents, self.base
        self.values[pointer] = (i + base, col + 1)
        out: list[Any] = []
        while True:
            row = rows[i]
            item_col = col + len(row[1])
            child = f"{pointer}/{len(out)}"
            if row[2]:
                value, i = self.mapping(i, item_col, child, depth + 1)
            else:
                item = row[5]
                if not item:
                    raise _GiveUp  # an empty entry
                value, i = self.scalar(i, item_col, item, col, child, depth)
            out.append(value)
            ind = indents[i]
            if ind == col and rows[i][1]:
                continue
            if ind > col:
                raise _GiveUp
            return out, i

    def scalar(
        self, i: int, col: int, rest: str, parent_col: int, pointer: str, depth: int
    ) -> tuple[Any, int]:
        """The scalar starting `rest` (row i, column col); returns the next row."""
        self.values[pointer] = (i + self.base, col + 1)
        first = rest[0]
        if first == "'":
            value, i = self.quoted(i, rest[1:], parent_col, _SINGLE_CLOSED, _SINGLE_OPEN)
        elif first == '"':
            value, i = self.quoted(i, rest[1:], parent_col, _DOUBLE_CLOSED, _DOUBLE_OPEN)
        elif rest == "{}" or rest == "[]":
            if depth + 1 > self.max_depth:
                raise _GiveUp
            return ({} if rest == "{}" else []), i + 1
        else:
            if first in _NOT_FIRST and (first != "-" or rest[1:2] in ("", " ")):
                raise _GiveUp
            parts = [rest]
            i = self.continuation(i + 1, parent_col, parts)
            text = " ".join(parts) if len(parts) > 1 else rest
            if ": " in text or text[-1] == ":":
                raise _GiveUp
            return plain_scalar(text, self.max_digits), i
        return value, i

    def continuation(self, i: int, parent_col: int, parts: list[str]) -> int:
        """Append the folded continuation lines of a plain scalar."""
        indents, lines = self.indents, self.lines
        while True:
            ind = indents[i]
            if ind <= parent_col:
                break
            seg = lines[i][ind:]
            if seg[0] in _NOT_FIRST or seg[-1] == ":":
                raise _GiveUp
            parts.append(seg)
            i += 1
        return i

    def quoted(
        self,
        i: int,
        seg: str,
        parent_col: int,
        closed: re.Pattern[str],
        still_open: re.Pattern[str],
    ) -> tuple[str, int]:
        """A quoted scalar, its lines folded; `seg` follows the opening quote."""
        indents, lines, n = self.indents, self.lines, len(self.rows)
        parts: list[str] = []
        while True:
            m = closed.match(seg)
            if m is not None:
                parts.append(
                    m.group(1).replace("''", "'") if closed is _SINGLE_CLOSED else m.group(1)
                )
                return " ".join(parts), i + 1
            if still_open.match(seg) is None:
                raise _GiveUp  # text after the closing quote, or an escape
            parts.append(seg.replace("''", "'") if closed is _SINGLE_CLOSED else seg)
            i += 1
            if i >= n:
                raise _GiveUp
            ind = indents[i]
            if ind <= parent_col:
                raise _GiveUp
            seg = lines[i][ind:]
