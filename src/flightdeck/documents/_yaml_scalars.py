"""YAML 1.2 core-schema scalar resolution, with a cap on integer digits."""

from __future__ import annotations

import math
import re
from typing import Any

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
# Those of them that only a null or a boolean word starts with.
_WORDY = frozenset("~nNtTfF")


def _int(text: str, base: int, digits: int, cap: int) -> int:
    if digits > cap:
        raise TooBig
    return int(text, base)


def plain_scalar(text: str, max_digits: int) -> Any:
    if not text:
        return None  # "" is null
    first = text[0]
    if first not in SCALAR_STARTS:
        return text  # the common case: an ordinary word
    # Dispatched on the first character: each pattern below can only match
    # text that starts with one of a few characters, so a word like `name`
    # or a path like `./x` is not tried against all six (about half of the
    # plain scalars that reach here are such words). Within a branch the
    # patterns keep the order of the full list (INT10 before FLOAT: `12`).
    if first in _WORDY:
        if text in NULL:
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        return text
    if first == ".":
        if _FLOAT.match(text):
            return float(text)
        if _INF.match(text):
            return math.inf
        if _NAN.match(text):
            return math.nan
        return text
    if _INT10.match(text):
        return _int(text, 10, len(text.lstrip("+-")), max_digits)
    if first == "0":
        if _INT8.match(text):
            return _int(text[2:], 8, len(text) - 2, max_digits)
        if _INT16.match(text):
            return _int(text[2:], 16, len(text) - 2, max_digits)
    if _FLOAT.match(text):
        return float(text)
    if (first == "+" or first == "-") and _INF.match(text):  # `+.inf`, `-.inf`
        return -math.inf if first == "-" else math.inf
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
