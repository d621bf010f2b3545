"""Invalid documents are explained from the fast validator's errors when that is
exact; the diagnostics must be the ones jsonschema's own walk gives, always."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest

from flightdeck.documents import DocumentKind, _schema_errors, load_document, validate_data

ROOT = Path(__file__).resolve().parent.parent.parent
KINDS = {kind.value for kind in DocumentKind}
VALUES: list[Any] = [5, "x", None, True, [1], {"a": 1}, "", "Z" * 300, -1, 1.5, "on"]


def _documents() -> list[tuple[DocumentKind, dict[str, Any]]]:
    found = []
    paths = sorted((ROOT / "tests" / "data" / "corpus").rglob("*.md"))
    for path in paths + sorted((ROOT / "examples").rglob("*.md")):
        kind = path.parent.name if path.parent.name in KINDS else None
        document = load_document(path, kind=kind).document
        if document is not None:
            found.append((document.kind, document.data))
    return found


def _mutate(rng: random.Random, data: dict[str, Any]) -> dict[str, Any]:
    """One to a few random edits: drop a field or item, add an unknown field,
    replace a value with one of another type or size."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        node: Any = data
        containers = [node]
        for _ in range(rng.randint(0, 4)):
            if isinstance(node, dict) and node:
                node = node[rng.choice(list(node))]
            elif isinstance(node, list) and node:
                node = rng.choice(node)
            else:
                break
            if isinstance(node, dict | list):
                containers.append(node)
        target = rng.choice(containers)
        if isinstance(target, dict) and target:
            key = rng.choice(list(target))
            choice = rng.randrange(4)
            if choice == 0:
                del target[key]
            elif choice == 1:
                target[f"extra_{rng.randrange(3)}"] = 1
            else:
                target[key] = rng.choice(VALUES)
        elif isinstance(target, list) and target:
            index = rng.randrange(len(target))
            if rng.randrange(3) == 0:
                target.pop(index)
            else:
                target[index] = rng.choice(VALUES)
    return data


def test_fast_explanations_equal_the_full_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(14)
    documents = _documents()
    cases = [(kind, _mutate(rng, data)) for kind, data in rng.choices(documents, k=500)]
    fast = [validate_data(kind, data) for kind, data in cases]
    monkeypatch.setattr(_schema_errors, "rust_errors", lambda schema, data: None)
    walked = [validate_data(kind, data) for kind, data in cases]
    invalid = [i for i, found in enumerate(walked) if found]
    assert len(invalid) > 300  # the mutations do break documents
    for index in invalid:
        assert fast[index] == walked[index], cases[index]


def test_an_unknown_field_is_explained_without_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("jsonschema walked the document")

    monkeypatch.setattr(_schema_errors, "shipped_python_validator", refuse)
    action = ROOT / "tests" / "data" / "corpus" / "invalid" / "action" / "unknown-key.md"
    result = load_document(action)
    assert [d.code for d in result.diagnostics] == ["schema.unknown_field"]
