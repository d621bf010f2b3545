"""jsonschema errors -> diagnostics a person can read without the schema.

This is the one boundary where jsonschema's errors are converted. Messages
name the field, what was allowed and what was found. For `oneOf`/`anyOf`
failures the branch that matched best is explained instead of every branch.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from jsonschema import ValidationError
from jsonschema.exceptions import best_match, relevance

from flightdeck.documents._diagnostics import Diagnostic, pointer_join
from flightdeck.documents._offline import (
    ecma_search,
    shipped_fast_validator,
    shipped_python_validator,
)
from flightdeck.documents._rust_errors import rust_errors


class _Where(NamedTuple):
    pointer: str
    schema_pointer: str


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


# Unknown-field hints (difflib) cost ~0.1 ms each; past this many, fields are
# reported without one, since the per-file cap hides them anyway.
HINT_BUDGET = 200


def schema_diagnostics(schema: str, data: Any, *, walk: bool = False) -> list[Diagnostic]:
    """Every schema problem of `data`, ordered by position in the document.

    The fast validator's errors are used as they are when they say all that
    jsonschema would (`rust_errors`); otherwise, or with `walk`, jsonschema
    walks the document."""
    found = None if walk else rust_errors(schema, data)
    if found is None:
        found = list(shipped_python_validator(schema).iter_errors(data))
    errors = sorted(found, key=relevance)
    out: list[Diagnostic] = []
    seen: set[tuple[str, str, str]] = set()
    for error in errors:
        for diag in _convert(_deepest(error), hints=len(out) < HINT_BUDGET):
            key = (diag.code, diag.pointer, diag.message)
            if key not in seen:
                seen.add(key)
                out.append(diag)
    return out


def fast_diagnostics(schema: str, data: Any) -> list[Diagnostic]:
    """Located diagnostics from the fast validator's own errors, for the rare
    case where it finds a problem the explaining validator does not."""
    out: list[Diagnostic] = []
    for error in shipped_fast_validator(schema).iter_errors(data):
        out.append(
            Diagnostic(
                "schema.invalid",
                f"{_field(pointer_join('', *error.instance_path))}: {error.message[:200]}",
                pointer=pointer_join("", *error.instance_path),
                schema_pointer=pointer_join("", *error.schema_path),
            )
        )
    return out or [Diagnostic("schema.invalid", "the frontmatter does not match its schema")]


def _deepest(error: ValidationError) -> ValidationError:
    """Descend into oneOf/anyOf failures to the branch that matched best."""
    while error.context:
        best = best_match(error.context)
        if best is None:
            break
        error = best
    return error


def _pointer(error: ValidationError) -> str:
    return pointer_join("", *error.absolute_path)


def _schema_pointer(error: ValidationError) -> str:
    return pointer_join("", *error.absolute_schema_path)


def _field(pointer: str) -> str:
    if not pointer:
        return "the frontmatter"
    token = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
    return f"item {token} of '{pointer.rsplit('/', 2)[-2]}'" if token.isdigit() else f"'{token}'"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "a mapping"


def _allowed(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_TYPE_NAMES.get(t, t) for t in names)


def _convert(error: ValidationError, hints: bool = True) -> Iterator[Diagnostic]:
    keyword = str(error.validator)
    pointer = _pointer(error)
    base = _Where(pointer, _schema_pointer(error))
    field = _field(pointer)
    value = error.validator_value
    if keyword == "required":
        yield from _required(error, base)
    elif keyword in ("additionalProperties", "unevaluatedProperties"):
        yield from _unknown_keys(error, keyword, base, hints)
    elif keyword == "type":
        yield Diagnostic(
            "schema.type",
            f"{field} must be {_allowed(value)}; "
            f"found {_type_of(error.instance)} {_show(error.instance)}",
            pointer=base.pointer,
            schema_pointer=base.schema_pointer,
        )
    elif keyword == "enum":
        options = ", ".join(_show(v) for v in value)
        yield Diagnostic(
            "schema.enum",
            f"{field} must be one of {options}; found {_show(error.instance)}",
            hint=_suggest(error.instance, value),
            pointer=base.pointer,
            schema_pointer=base.schema_pointer,
        )
    elif keyword == "const":
        yield Diagnostic(
            "schema.const",
            f"{field} must be {_show(value)}; found {_show(error.instance)}",
            pointer=base.pointer,
            schema_pointer=base.schema_pointer,
        )
    elif keyword == "pattern":
        desc = error.schema.get("description") if isinstance(error.schema, dict) else None
        yield Diagnostic(
            "schema.pattern",
            f"{field} has an invalid format: {_show(error.instance)}",
            hint=f"expected {desc}" if desc else f"must match the pattern {value}",
            pointer=base.pointer,
            schema_pointer=base.schema_pointer,
        )
    else:
        yield Diagnostic(
            f"schema.{keyword}",
            f"{field}: {_rephrase(error)}",
            pointer=base.pointer,
            schema_pointer=base.schema_pointer,
        )


def _required(error: ValidationError, base: _Where) -> Iterator[Diagnostic]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    where = _field(base.pointer)
    for name in error.validator_value:
        if name not in instance:
            yield Diagnostic(
                "schema.required",
                f"missing required field '{name}' in {where}",
                hint=f"add '{name}:'",
                pointer=base.pointer,
                schema_pointer=base.schema_pointer,
            )


def _unknown_keys(
    error: ValidationError, keyword: str, base: _Where, hints: bool
) -> Iterator[Diagnostic]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    known = sorted((error.schema.get("properties") or {}) if isinstance(error.schema, dict) else {})
    evaluated = set(known)
    extras = _extras(error, keyword, instance, evaluated)
    for index, key in enumerate(extras or [k for k in instance if k not in evaluated]):
        hint = None
        if hints and index < HINT_BUDGET:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else None
            if hint is None and known:
                hint = "allowed here: " + ", ".join(known)
        yield Diagnostic(
            "schema.unknown_field",
            f"unknown field '{key}' in {_field(base.pointer)}",
            hint=hint,
            pointer=pointer_join(base.pointer, key),
            schema_pointer=base.schema_pointer,
        )


def _extras(
    error: ValidationError, keyword: str, instance: dict[str, Any], known: set[str]
) -> list[str]:
    """The keys the error is about. For additionalProperties they are recomputed
    from the schema (linear in the key count); for unevaluatedProperties they are
    recovered from the message, which is quadratic, so only for small mappings."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword == "additionalProperties":
        patterns = list(schema.get("patternProperties") or {})
        return [
            k for k in instance if k not in known and not any(ecma_search(p, k) for p in patterns)
        ]
    if len(instance) > 1000:
        return []
    return [k for k in instance if k not in known and repr(k) in error.message]


def _suggest(found: Any, options: list[Any]) -> str | None:
    if not isinstance(found, str):
        return None
    close = difflib.get_close_matches(found, [o for o in options if isinstance(o, str)], n=1)
    return f"did you mean '{close[0]}'?" if close else None


def _rephrase(error: ValidationError) -> str:
    keyword, value, instance = error.validator, error.validator_value, error.instance
    phrases = {
        "minLength": f"must be at least {value} characters long",
        "maxLength": f"must be at most {value} characters long (found {_len(instance)})",
        "minimum": f"must be at least {value}; found {_show(instance)}",
        "maximum": f"must be at most {value}; found {_show(instance)}",
        "exclusiveMinimum": f"must be greater than {value}; found {_show(instance)}",
        "exclusiveMaximum": f"must be less than {value}; found {_show(instance)}",
        "minItems": f"must have at least {value} item(s)",
        "maxItems": f"must have at most {value} item(s)",
        "uniqueItems": "must not contain duplicates",
        "minProperties": f"must have at least {value} field(s)",
        "not": "has a value that is not allowed here",
        "format": f"must be a valid {value}; found {_show(instance)}",
    }
    return phrases.get(str(keyword), f"is not valid: {error.message}")


def _len(value: Any) -> int:
    return len(value) if isinstance(value, str | list | dict) else 0
