"""Test oracle: the plain-scalar resolver as it was on main at commit
8a899c4 (src/flightdeck/documents/_yaml_scalars.py), one pattern after
another, copied once and not to be edited, so that the resolver that
dispatches on the first character can be checked against it by
tests/documents/test_yaml_differential.py.
"""

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


# First characters a non-string plain scalar can start with.
SCALAR_STARTS = frozenset("0123456789+-.~nNtTfF")


def _int(text: str, base: int, digits: int, cap: int) -> int:
    if digits > cap:
        raise TooBig
    return int(text, base)


def plain_scalar(text: str, max_digits: int) -> Any:
    if text and text[0] not in SCALAR_STARTS:
        return text  # the common case: an ordinary word
    if text in NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT10.match(text):
        return _int(text, 10, len(text.lstrip("+-")), max_digits)
    if _INT8.match(text):
        return _int(text[2:], 8, len(text) - 2, max_digits)
    if _INT16.match(text):
        return _int(text[2:], 16, len(text) - 2, max_digits)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text[0] == "-" else math.inf
    if _NAN.match(text):
        return math.nan
    return text
