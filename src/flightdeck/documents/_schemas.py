"""The shipped JSON Schemas, read from the package's files.

`_offline` builds the registry `$ref`s resolve against from them and
compiles each into its validators; this module imports nothing of the
package.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from flightdeck._json import read_json

# The package's own folder, read as files: importlib.resources would give the
# same paths for an installed package but costs ~5 ms of every command's start.
_SCHEMAS = Path(__file__).resolve().parent / "schemas"
BASE_URI = "https://flightdeck.dev/schemas/v1/"


@functools.cache
def schema_names() -> tuple[str, ...]:
    folder = _SCHEMAS
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
    path = _SCHEMAS / f"{name}.schema.json"
    data: dict[str, Any] = read_json(path.read_text("utf-8"))
    return data


def schema_uri(name: str) -> str:
    return str(load_schema(name).get("$id", f"{BASE_URI}{name}.schema.json"))


@functools.cache
def shipped_resources() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(URI, schema) for every schema a `$ref` may name: flightdeck's own, and
    the stand-ins under `schemas/external/` for spec schemas that manifests
    refer to by their public URL (so that nothing needs fetching)."""
    own = [(schema_uri(name), load_schema(name)) for name in schema_names()]
    folder = _SCHEMAS / "external"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".schema.json"):
            data: dict[str, Any] = read_json(entry.read_text("utf-8"))
            own.append((str(data["$id"]), data))
    return tuple(own)
