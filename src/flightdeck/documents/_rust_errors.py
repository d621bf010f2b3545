"""The fast validator's errors in the explaining validator's shape, when that is exact.

Explaining a failure with jsonschema walks the whole document in Python
(about 6x the cost of loading a valid one); jsonschema-rs finds the same
errors in microseconds. For the plain cases, an error of a keyword that
judges one value (`type`, `enum`, `required`, `additionalProperties`, ...),
reached only through `properties`, `items`, `$ref`, `allOf` and
`if`/`then`/`else`, the rs error carries everything a diagnostic is built
from: the instance path, the keyword's location (hence its value and the
schema around it) and the instance. Those are turned into jsonschema
`ValidationError`s; anything else (a `oneOf`/`anyOf` failure, whose best
branch only jsonschema's `best_match` picks, an unevaluated-properties error,
two same-place errors from different subschemas, whose order only the
Python walk defines) returns None and the caller explains with jsonschema.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from jsonschema import ValidationError

from flightdeck.documents._offline import registry, shipped_fast_validator, shipped_python_validator

# Keywords whose diagnostics need only the keyword, its value, the schema
# around it and the instance (never jsonschema's message).
_PLAIN = frozenset(
    {
        "additionalProperties",
        "required",
        "type",
        "enum",
        "const",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
    }
)
# Applicators that hand errors up unchanged in jsonschema, and whether the
# next path token is theirs (a property name or an index).
_THROUGH = {
    "properties": True,
    "patternProperties": True,
    "prefixItems": True,
    "allOf": True,
    "items": False,
    "additionalProperties": False,
    "$ref": False,
    "if": False,
    "then": False,
    "else": False,
}


def rust_errors(schema: str, data: Any) -> list[ValidationError] | None:
    """jsonschema errors rebuilt from jsonschema-rs, or None when not exact."""
    out: list[tuple[int, ValidationError]] = []
    parents: dict[tuple[str | int, ...], str] = {}
    checker = shipped_python_validator(schema).TYPE_CHECKER
    for error in shipped_fast_validator(schema).iter_errors(data):
        path = tuple(error.instance_path)
        location = error.absolute_keyword_location
        tokens = list(error.evaluation_path)
        if not location or "#" not in location or not _plain_path(tokens):
            return None
        parent, _, keyword = location.rpartition("/")
        if parents.setdefault(path, parent) != parent:
            return None  # same place, different subschemas: only the walk orders them
        around = _subschema(parent)
        if not isinstance(around, dict) or keyword not in around:
            return None
        found, instance = _at(data, path)
        if not found:
            return None
        rebuilt = ValidationError(
            error.message,
            validator=keyword,
            path=path,
            validator_value=around[keyword],
            instance=instance,
            schema=around,
            schema_path=[t for t in tokens if t != "$ref"],
            type_checker=checker,
        )
        out.append((list(around).index(keyword), rebuilt))
    # jsonschema walks one subschema's keywords in their written order.
    out.sort(key=lambda pair: pair[0])
    return [error for _, error in out]


def _plain_path(tokens: list[str | int]) -> bool:
    if not tokens or tokens[-1] not in _PLAIN:
        return False
    index, end = 0, len(tokens) - 1
    while index < end:
        named = _THROUGH.get(str(tokens[index]))
        if named is None:
            return False
        index += 2 if named else 1
    return index == end


@functools.lru_cache(maxsize=512)
def _subschema(location: str) -> Any:
    try:
        return registry().resolver().lookup(location).contents
    except Exception:  # a location only the Rust side can name: explain the slow way
        return None


def _at(data: Any, path: Iterable[str | int]) -> tuple[bool, Any]:
    node = data
    for token in path:
        in_map = isinstance(node, dict) and isinstance(token, str) and token in node
        in_list = isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node)
        if not (in_map or in_list):
            return False, None
        node = node[token]
    return True, node
