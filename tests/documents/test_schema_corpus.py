"""The shipped JSON Schemas against the acceptance corpus in tests/data/corpus.

Every file under corpus/valid/<kind>/ loads with no diagnostic; every file
under corpus/invalid/<kind>/ fails with the keyword and JSON pointer named on
its `expect: <keyword> <pointer>` line (`""` is the document root). Files are
loaded through flightdeck.documents.load_document with the kind forced by the
folder name, so the YAML 1.2 rules of the real loader apply.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from flightdeck.documents import Document, load_document

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
KINDS = ("action", "tool", "driver", "skill", "io", "runner")
SCHEMAS = (*KINDS, "driver-sdk", "common")
ID_PREFIX = "https://flightdeck.dev/schemas/v1/"
EXPECT = re.compile(r"expect:\s*(\S+)\s+(\S+)")
# The loader reports an unknown key under one code, whichever keyword caught it.
CODE_OF = {
    "additionalProperties": "schema.unknown_field",
    "unevaluatedProperties": "schema.unknown_field",
}


def schema_files() -> dict[str, Any]:
    folder = importlib.resources.files("flightdeck.documents") / "schemas"
    return {
        entry.name.removesuffix(".schema.json"): json.loads(entry.read_text("utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".schema.json")
    }


@cache
def python_validator(name: str) -> Draft202012Validator:
    schemas = schema_files()
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return Draft202012Validator(schemas[name], registry=registry)


@cache
def rust_validator(name: str) -> Any:
    schemas = schema_files()
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas.values()])
    return jsonschema_rs.validator_for(schemas[name], registry=registry, offline=True)


def schema_for(kind: str, data: Any) -> str:
    """A DRIVER.md whose kind is sdk is validated against driver-sdk only."""
    if kind == "driver" and isinstance(data, dict) and data.get("kind") == "sdk":
        return "driver-sdk"
    return kind


def _cases(folder: str) -> Iterator[Any]:
    root = CORPUS / folder
    for path in sorted(root.rglob("*.md")):
        kind = path.relative_to(root).parts[0]
        yield pytest.param(kind, path, id=str(path.relative_to(root)))


def _load(kind: str, path: Path) -> tuple[Document, list[Any]]:
    result = load_document(path, kind=kind)
    assert result.document is not None, [d.message for d in result.diagnostics]
    return result.document, list(result.diagnostics)


def _expectation(document: Document) -> tuple[str, str]:
    found = EXPECT.search(document.body)
    assert found, "no `expect: <keyword> <pointer>` line in the body"
    keyword, pointer = found.groups()
    return keyword, "" if pointer == '""' else pointer


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _matches(error: ValidationError, keyword: str, pointer: str) -> bool:
    if error.validator != keyword:
        return False
    at = _pointer(error.absolute_path)
    if at == pointer:
        return True
    # additional/unevaluatedProperties report the object; the corpus names the key.
    unknown_key = keyword in CODE_OF and isinstance(error.instance, dict)
    return unknown_key and any(pointer == f"{at}/{key}" for key in error.instance)


def test_every_schema_is_valid_draft_2020_12_with_its_own_id() -> None:
    schemas = schema_files()
    assert set(SCHEMAS) <= set(schemas)
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"{ID_PREFIX}{name}.schema.json"


def test_corpus_covers_every_kind() -> None:
    for folder in ("valid", "invalid"):
        assert {p.name for p in (CORPUS / folder).iterdir()} == set(KINDS)
    assert len(list((CORPUS / "invalid").rglob("*.md"))) >= 25


@pytest.mark.parametrize(("kind", "path"), list(_cases("valid")))
def test_valid_corpus_document_loads_without_diagnostics(kind: str, path: Path) -> None:
    document, diagnostics = _load(kind, path)
    assert not diagnostics, "\n".join(f"{d.pointer}: {d.message}" for d in diagnostics)
    name = schema_for(kind, document.data)
    assert python_validator(name).is_valid(document.data)
    assert rust_validator(name).is_valid(document.data)


@pytest.mark.parametrize(("kind", "path"), list(_cases("invalid")))
def test_invalid_corpus_document_fails_with_its_expected_error(kind: str, path: Path) -> None:
    document, diagnostics = _load(kind, path)
    keyword, pointer = _expectation(document)
    code = CODE_OF.get(keyword, f"schema.{keyword}")
    reported = [(d.code, d.pointer) for d in diagnostics]
    assert (code, pointer) in reported, reported
    name = schema_for(kind, document.data)
    assert not rust_validator(name).is_valid(document.data)
    # Each invalid case breaks exactly one rule, so it fails with exactly one error.
    errors = list(python_validator(name).iter_errors(document.data))
    assert len(errors) == 1, [(e.validator, _pointer(e.absolute_path)) for e in errors]
    assert _matches(errors[0], keyword, pointer)
