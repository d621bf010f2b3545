"""The shipped JSON Schemas against the acceptance corpus in tests/data/corpus.

Every file under corpus/valid/<kind>/ must validate against its kind's schema;
every file under corpus/invalid/<kind>/ must fail with the keyword and JSON
pointer named on its `expect: <keyword> <pointer>` line.

Until the loader (flightdeck.documents.load_document) lands, frontmatter is
read here with a small YAML 1.2-ish SafeLoader: `on`/`yes` stay strings and
dates stay strings, as the real loader promises.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
SCHEMA_OF_KIND = {
    "action": "action",
    "tool": "tool",
    "driver": "driver",
    "driver-sdk": "driver-sdk",
    "skill": "skill",
    "io": "io",
    "runner": "runner",
}
ID_PREFIX = "https://flightdeck.dev/schemas/v1/"
EXPECT = re.compile(r"expect:\s*(\S+)\s+(\S*)")


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans only and no timestamp conversion."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _first in list(_Yaml12Loader.yaml_implicit_resolvers):
    _Yaml12Loader.yaml_implicit_resolvers[_first] = [
        (tag, rx)
        for tag, rx in _Yaml12Loader.yaml_implicit_resolvers[_first]
        if tag != "tag:yaml.org,2002:bool"
    ]
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _jsonify(value: Any) -> Any:
    """Mapping keys become strings, as in JSON (YAML allows `0: ok`)."""
    if isinstance(value, dict):
        return {str(k): _jsonify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonify(v) for v in value]
    return value


def frontmatter(path: Path) -> tuple[Any, str]:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[0] == "---", f"{path}: no frontmatter"
    end = lines.index("---", 1)
    data = yaml.load("\n".join(lines[1:end]), Loader=_Yaml12Loader)
    return _jsonify(data), "\n".join(lines[end + 1 :])


def schema_files() -> dict[str, Any]:
    folder = importlib.resources.files("flightdeck.documents") / "schemas"
    out: dict[str, Any] = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".schema.json"):
            out[entry.name.removesuffix(".schema.json")] = json.loads(entry.read_text("utf-8"))
    return out


@cache
def registry() -> Registry:  # type: ignore[type-arg]
    resources = [
        (schema["$id"], Resource.from_contents(schema)) for schema in schema_files().values()
    ]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    schema = schema_files()[name]
    return Draft202012Validator(schema, registry=registry())


def schema_for(kind: str, data: Any) -> str:
    """DRIVER.md with kind: sdk is validated against driver-sdk only."""
    if kind == "driver" and isinstance(data, dict) and data.get("kind") == "sdk":
        return "driver-sdk"
    return SCHEMA_OF_KIND[kind]


def _cases(folder: str) -> Iterator[Any]:
    root = CORPUS / folder
    for path in sorted(root.rglob("*.md")):
        kind = path.relative_to(root).parts[0]
        yield pytest.param(kind, path, id=str(path.relative_to(root)))


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _matches(error: ValidationError, keyword: str, pointer: str) -> bool:
    if error.validator != keyword:
        return False
    at = _pointer(error.absolute_path)
    if at == pointer:
        return True
    # additional/unevaluatedProperties report the object; the corpus names the key.
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(
        error.instance, dict
    ):
        return any(pointer == f"{at}/{key}" for key in error.instance)
    return False


def _all_errors(errors: Any) -> Iterator[ValidationError]:
    for error in errors:
        yield error
        yield from _all_errors(error.context or ())


def test_every_schema_is_valid_draft_2020_12() -> None:
    schemas = schema_files()
    assert set(SCHEMA_OF_KIND.values()) <= set(schemas)
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"{ID_PREFIX}{name}.schema.json"


def test_schemas_ship_as_package_data() -> None:
    folder = importlib.resources.files("flightdeck.documents") / "schemas"
    names = {entry.name for entry in folder.iterdir()}
    expected = {f"{n}.schema.json" for n in SCHEMA_OF_KIND.values()}
    assert expected <= names


@pytest.mark.parametrize(("kind", "path"), list(_cases("valid")))
def test_valid_corpus_document_validates(kind: str, path: Path) -> None:
    data, _ = frontmatter(path)
    errors = sorted(
        validator(schema_for(kind, data)).iter_errors(data), key=lambda e: list(e.absolute_path)
    )
    assert not errors, "\n".join(f"{_pointer(e.absolute_path)}: {e.message}" for e in errors)


@pytest.mark.parametrize(("kind", "path"), list(_cases("invalid")))
def test_invalid_corpus_document_fails_as_expected(kind: str, path: Path) -> None:
    data, body = frontmatter(path)
    found = EXPECT.search(body)
    assert found, f"{path}: no `expect: <keyword> <pointer>` line in the body"
    keyword, pointer = found.group(1), found.group(2)
    errors = list(validator(schema_for(kind, data)).iter_errors(data))
    assert errors, f"{path} validated but should fail with {keyword} at {pointer!r}"
    seen = [(e.validator, _pointer(e.absolute_path)) for e in _all_errors(errors)]
    assert any(_matches(e, keyword, pointer) for e in _all_errors(errors)), seen
