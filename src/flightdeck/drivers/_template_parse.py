"""The `${...}` template grammar (AIP-31 body templates, used by AIP-33 `args_template`).

    template   := ( text | "$${" | "${" ws expr ws "}" )*      "$${" is a literal "${"
    expr       := ref ( ws "|" ws filter )*
    ref        := root ( "." name | "[" index "]" | "[" string "]" )*
    root       := "input" | "secrets" | "context"
    filter     := "default" ws "(" ws literal ws ")" | "json"
    literal    := string | number | "true" | "false" | "null"
    string     := "'" ... "'" | '"' ... '"'       (backslash escapes the next character)
    number     := "-"? digits ( "." digits )? ( ("e"|"E") ("+"|"-")? digits )?
    name       := [A-Za-z_] [A-Za-z0-9_-]*

A tokenizer feeds a recursive-descent parser; every syntax error carries the
0-based offset in the template string. Parsing happens once, at registration.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

ROOTS = ("input", "secrets", "context")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_REST = _NAME_START | frozenset("0123456789-")
_DIGITS = frozenset("0123456789")
_PUNCT = {".": "dot", "[": "lbrack", "]": "rbrack", "|": "pipe", "(": "lparen", ")": "rparen"}


class TemplateSyntaxError(ValueError):
    """A template that does not follow the grammar; `offset` is 0-based in its string."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Ref:
    root: str
    path: tuple[str | int, ...]

    @property
    def text(self) -> str:
        return format_ref(self)


@dataclass(frozen=True)
class Default:
    value: object


@dataclass(frozen=True)
class ToJson:
    pass


Filter = Default | ToJson


@dataclass(frozen=True)
class Expr:
    ref: Ref
    filters: tuple[Filter, ...] = ()


Part = str | Expr


@dataclass(frozen=True)
class _Token:
    kind: str  # name, int, number, string, dot, lbrack, rbrack, pipe, lparen, rparen, end
    value: object
    offset: int


class _Lexer:
    """Tokens of one `${ ... }` body; stops at the closing `}`."""

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.pos = start

    def _skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def next(self) -> _Token:
        self._skip_ws()
        text, at = self.text, self.pos
        if at >= len(text):
            raise TemplateSyntaxError("unterminated `${`: missing `}`", at)
        char = text[at]
        if char == "}":
            self.pos += 1
            return _Token("end", None, at)
        if char in _PUNCT:
            self.pos += 1
            return _Token(_PUNCT[char], char, at)
        if char in "'\"":
            return self._string(char, at)
        if char in _DIGITS or (char == "-" and text[at + 1 : at + 2].isdigit()):
            return self._number(at)
        if char in _NAME_START:
            end = at + 1
            while end < len(text) and text[end] in _NAME_REST:
                end += 1
            self.pos = end
            return _Token("name", text[at:end], at)
        raise TemplateSyntaxError(f"unexpected character {char!r}", at)

    def _string(self, quote: str, at: int) -> _Token:
        out: list[str] = []
        i = at + 1
        while i < len(self.text):
            char = self.text[i]
            if char == "\\" and i + 1 < len(self.text):
                out.append(self.text[i + 1])
                i += 2
                continue
            if char == quote:
                self.pos = i + 1
                return _Token("string", "".join(out), at)
            out.append(char)
            i += 1
        raise TemplateSyntaxError("unterminated string literal", at)

    def _number(self, at: int) -> _Token:
        text, i = self.text, at + (1 if self.text[at] == "-" else 0)
        while i < len(text) and text[i] in _DIGITS:
            i += 1
        is_float = False
        if i + 1 < len(text) and text[i] == "." and text[i + 1] in _DIGITS:
            is_float, i = True, i + 1
            while i < len(text) and text[i] in _DIGITS:
                i += 1
        if i < len(text) and text[i] in "eE":
            j = i + 1 + (1 if text[i + 1 : i + 2] in ("+", "-") else 0)
            if j < len(text) and text[j] in _DIGITS:
                is_float, i = True, j
                while i < len(text) and text[i] in _DIGITS:
                    i += 1
        self.pos = i
        raw = text[at:i]
        return _Token("number" if is_float else "int", float(raw) if is_float else int(raw), at)


class _Parser:
    def __init__(self, text: str, start: int) -> None:
        self.lexer = _Lexer(text, start)
        self.token = self.lexer.next()

    def _advance(self) -> _Token:
        current, self.token = self.token, self.lexer.next()
        return current

    def _expect(self, kind: str, what: str) -> _Token:
        if self.token.kind != kind:
            raise TemplateSyntaxError(
                f"expected {what}, found {_show(self.token)}", self.token.offset
            )
        return self._advance()

    def expr(self) -> Expr:
        ref = self._ref()
        filters: list[Filter] = []
        while self.token.kind == "pipe":
            self._advance()
            filters.append(self._filter())
        if self.token.kind != "end":
            raise TemplateSyntaxError(
                f"expected `|` or `}}`, found {_show(self.token)}", self.token.offset
            )
        return Expr(ref, tuple(filters))

    def _ref(self) -> Ref:
        head = self._expect("name", "`input`, `secrets` or `context`")
        if head.value not in ROOTS:
            raise TemplateSyntaxError(
                f"unknown root {head.value!r}: use input, secrets or context", head.offset
            )
        path: list[str | int] = []
        while self.token.kind in ("dot", "lbrack"):
            if self._advance().kind == "dot":
                path.append(str(self._expect("name", "a field name after `.`").value))
                continue
            if self.token.kind not in ("int", "string"):
                raise TemplateSyntaxError(
                    f"expected an index or a quoted key in `[...]`, found {_show(self.token)}",
                    self.token.offset,
                )
            item = self._advance()
            if isinstance(item.value, int) and item.value < 0:
                raise TemplateSyntaxError("negative index", item.offset)
            path.append(item.value if isinstance(item.value, (int, str)) else str(item.value))
            self._expect("rbrack", "`]`")
        if head.value == "secrets" and (len(path) != 1 or not isinstance(path[0], str)):
            raise TemplateSyntaxError("a secret reference is `secrets.NAME`", head.offset)
        return Ref(str(head.value), tuple(path))

    def _filter(self) -> Filter:
        name = self._expect("name", "a filter (`default(...)` or `json`)")
        if name.value == "json":
            return ToJson()
        if name.value != "default":
            raise TemplateSyntaxError(
                f"unknown filter {name.value!r}: use default(...) or json", name.offset
            )
        self._expect("lparen", "`(` after default")
        value = self._literal()
        self._expect("rparen", "`)`")
        return Default(value)

    def _literal(self) -> object:
        token = self.token
        if token.kind in ("string", "int", "number"):
            self._advance()
            return token.value
        if token.kind == "name" and token.value in ("true", "false", "null"):
            self._advance()
            return {"true": True, "false": False, "null": None}[str(token.value)]
        raise TemplateSyntaxError(
            f"expected a literal ('text', 42, 1.5, true, false, null), found {_show(token)}",
            token.offset,
        )


def _show(token: _Token) -> str:
    if token.kind == "end":
        return "`}`"
    if token.kind == "string":
        return "a string"
    return f"`{token.value}`"


def parse_string(text: str) -> tuple[Part, ...]:
    """Split a template string into literal text and expressions."""
    return _parse_short(text) if len(text) <= _CACHED_CHARS else _parse_string(text)


# Templates repeat across drivers and entries (`${input.prompt}`): a short
# one is parsed once per process (its parts are frozen). Long ones are not
# kept, so a hostile file cannot fill the cache with megabytes.
_CACHED_CHARS = 512


@functools.lru_cache(maxsize=4096)
def _parse_short(text: str) -> tuple[Part, ...]:
    return _parse_string(text)


def _parse_string(text: str) -> tuple[Part, ...]:
    parts: list[Part] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("$${", i):
            buf.append("${")
            i += 3
        elif text.startswith("${", i):
            if buf:
                parts.append("".join(buf))
                buf = []
            parser = _Parser(text, i + 2)
            parts.append(parser.expr())
            i = parser.lexer.pos
        else:
            buf.append(text[i])
            i += 1
    if buf:
        parts.append("".join(buf))
    return tuple(parts)


def format_literal(value: object) -> str:
    """The template spelling of a literal (inverse of the literal rule)."""
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


def _is_name(text: str) -> bool:
    return bool(text) and text[0] in _NAME_START and all(c in _NAME_REST for c in text)


def format_ref(ref: Ref) -> str:
    out = ref.root
    for part in ref.path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if _is_name(part) else f"[{format_literal(part)}]"
    return out


def format_expr(expr: Expr) -> str:
    out = format_ref(expr.ref)
    for flt in expr.filters:
        out += " | json" if isinstance(flt, ToJson) else f" | default({format_literal(flt.value)})"
    return "${" + out + "}"
