"""Every JSON Schema flightdeck evaluates goes through here: one offline
registry, ECMA-262 patterns, and a check that each `$ref` resolves locally.

Shipped schemas and user schemas (TOOL/IO `inputs`/`outputs`, driver
contracts, plan inputs) resolve `$ref` against the same registry, which has
no `retrieve` hook: a reference that is neither in the schema itself nor
shipped with flightdeck cannot be fetched; `ref_problems` reports it at
validate time and the validators refuse it at run time.

Draft 2020-12 says `pattern` is an ECMA-262 regular expression. The fast
validator (jsonschema-rs) follows that; the explaining one (jsonschema) uses
Python's `re` unless told otherwise, and the two differ (`\\s` matches
U+FEFF in ECMA-262, not in `re`), so its `pattern` and `patternProperties`
keywords are replaced by ones that use `regress`, an ECMA-262 engine.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import jsonschema_rs

from flightdeck.documents._diagnostics import Diagnostic, pointer_join
from flightdeck.documents._schemas import load_schema, shipped_resources

# The base that relative refs of a schema without `$id` resolve against; never fetched.
_USER_BASE = "https://flightdeck.invalid/user-schema.json"


# jsonschema, referencing and regress are imported where first used: a valid
# document needs only jsonschema-rs, and they are ~50 ms of a command's start.


@functools.cache
def registry() -> Any:
    """The offline `referencing.Registry` of every shipped schema."""
    import referencing
    import referencing.jsonschema

    # No `retrieve` callable: an unknown $ref fails instead of being fetched.
    out: referencing.Registry[Any] = referencing.Registry()
    for uri, schema in shipped_resources():
        resource = referencing.Resource.from_contents(
            schema, default_specification=referencing.jsonschema.DRAFT202012
        )
        out = out.with_resource(uri, resource)
    return out.crawl()


@functools.cache
def rust_registry() -> Any:
    return jsonschema_rs.Registry(list(shipped_resources()))


@functools.lru_cache(maxsize=1024)
def ecma(pattern: str) -> Any:
    """A compiled ECMA-262 regex; None when `pattern` is not one."""
    import regress

    try:
        return regress.Regex(pattern, "u")
    except Exception:  # regress raises its own error type for bad patterns
        return None


def ecma_search(pattern: str, text: str) -> bool:
    compiled = ecma(pattern)
    return compiled is not None and compiled.find(text) is not None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        import jsonschema

        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if ecma_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


@functools.cache
def _ecma_validator_class() -> Any:
    import jsonschema
    import jsonschema.validators

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        {"pattern": _pattern, "patternProperties": _pattern_properties},
    )


def explaining_validator(schema: Any) -> Any:
    """The jsonschema validator (errors with paths), offline, ECMA patterns."""
    return _ecma_validator_class()(schema, registry=registry())


def fast_validator(schema: Any) -> Any:
    """The jsonschema-rs validator, offline; raises if the schema does not compile."""
    return jsonschema_rs.validator_for(schema, registry=rust_registry(), offline=True)


# A shipped schema is compiled once per process, twice over: a fast Rust
# validator (jsonschema-rs) answers "is it valid?" for the common case, and
# the reference Python implementation (jsonschema) explains failures, since
# its errors carry the paths and keywords diagnostics are built from. Both
# read the same schema files, so there is one source of truth.


@functools.cache
def shipped_python_validator(name: str) -> Any:
    return explaining_validator(load_schema(name))


@functools.cache
def shipped_fast_validator(name: str) -> Any:
    return fast_validator(load_schema(name))


def shipped_is_valid(name: str, data: Any) -> bool:
    return bool(shipped_fast_validator(name).is_valid(data))


def _refs(schema: Any) -> Iterator[tuple[str, str, str]]:
    """(pointer of the keyword, base URI, reference) for each `$ref`/`$dynamicRef`."""
    stack: list[tuple[Any, str, str]] = [(schema, "", _USER_BASE)]
    while stack:
        node, pointer, base = stack.pop()
        if isinstance(node, dict):
            own = node.get("$id")
            if isinstance(own, str):
                base = urljoin(base, own)
            for keyword in ("$ref", "$dynamicRef"):
                ref = node.get(keyword)
                if isinstance(ref, str):
                    yield pointer_join(pointer, keyword), base, ref
            for key, value in node.items():
                if isinstance(value, dict | list) and key not in ("enum", "const", "examples"):
                    stack.append((value, pointer_join(pointer, key), base))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                if isinstance(value, dict | list):
                    stack.append((value, pointer_join(pointer, index), base))


def _has_refs(schema: Any) -> bool:
    """Whether `_refs` finds anything, without the pointers it builds on the
    way: most inputs and outputs schemas have no `$ref` (~3 us, not ~8)."""
    try:
        return _any_ref(schema)
    except RecursionError:  # data nested past the stack, from a caller: the full walk
        return True


def _any_ref(node: Any) -> bool:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str) or isinstance(node.get("$dynamicRef"), str):
            return True
        for key, value in node.items():
            if (
                isinstance(value, dict | list)
                and key not in ("enum", "const", "examples")
                and _any_ref(value)
            ):
                return True
    elif isinstance(node, list):
        for value in node:
            if isinstance(value, dict | list) and _any_ref(value):
                return True
    return False


def ref_problems(schema: Any, where: str, code: str) -> list[Diagnostic]:
    """A diagnostic for each reference that does not resolve offline."""
    if not isinstance(schema, dict) or not _has_refs(schema):
        return []
    found = list(_refs(schema))
    if not found:
        return []
    import referencing
    import referencing.jsonschema

    root = schema if isinstance(schema.get("$id"), str) else {**schema, "$id": _USER_BASE}
    try:
        resource = referencing.Resource.from_contents(
            root, default_specification=referencing.jsonschema.DRAFT202012
        )
        resolver = registry().with_resource(str(root["$id"]), resource).crawl().resolver()
    except Exception:  # not readable as a schema at all: the schema checks report that
        return []
    out: list[Diagnostic] = []
    for pointer, base, ref in found:
        try:
            resolver.lookup(urljoin(base, ref))
        except Exception:  # Unresolvable, or a malformed reference (bad pointer, bad URI)
            out.append(
                Diagnostic(
                    code,
                    f"$ref {ref!r} is neither in this schema nor shipped with flightdeck",
                    pointer=where + pointer,
                    hint="nothing is fetched: copy the referenced schema into $defs "
                    "and refer to it as '#/$defs/NAME'",
                )
            )
    return out
