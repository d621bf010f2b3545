"""The shipped JSON Schemas, an offline registry, and compiled validators.

Each schema is compiled once per process, twice over: a fast Rust validator
(jsonschema-rs) answers "is it valid?" for the common case, and the
reference Python implementation (jsonschema) explains failures, since its
errors carry the paths and keywords diagnostics are built from. Both read
the same schema files, so there is one source of truth.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema
import jsonschema_rs
import referencing
import referencing.jsonschema

_PACKAGE = "flightdeck.documents"
BASE_URI = "https://flightdeck.dev/schemas/v1/"


@functools.cache
def schema_names() -> tuple[str, ...]:
    folder = resources.files(_PACKAGE) / "schemas"
    names = [
        entry.name.removesuffix(".schema.json")
        for entry in folder.iterdir()
        if entry.name.endswith(".schema.json")
    ]
    return tuple(sorted(names))


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """The shipped schema `name` (e.g. "action", "driver-sdk") as JSON data."""
    if name not in schema_names():
        known = ", ".join(schema_names())
        raise KeyError(f"no shipped schema named {name!r} (known: {known})")
    path = resources.files(_PACKAGE) / "schemas" / f"{name}.schema.json"
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def schema_uri(name: str) -> str:
    return str(load_schema(name).get("$id", f"{BASE_URI}{name}.schema.json"))


@functools.cache
def _resources() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple((schema_uri(name), load_schema(name)) for name in schema_names())


@functools.cache
def _registry() -> referencing.Registry[Any]:
    # No `retrieve` callable: an unknown $ref fails instead of being fetched.
    registry: referencing.Registry[Any] = referencing.Registry()
    for uri, schema in _resources():
        resource = referencing.Resource.from_contents(
            schema, default_specification=referencing.jsonschema.DRAFT202012
        )
        registry = registry.with_resource(uri, resource)
    return registry.crawl()


@functools.cache
def python_validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(name), registry=_registry())


@functools.cache
def _rust_registry() -> Any:
    return jsonschema_rs.Registry(list(_resources()))


@functools.cache
def fast_validator(name: str) -> Any:
    return jsonschema_rs.validator_for(load_schema(name), registry=_rust_registry(), offline=True)


def is_valid(name: str, data: Any) -> bool:
    return bool(fast_validator(name).is_valid(data))
