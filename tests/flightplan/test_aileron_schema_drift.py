"""Drift guard: flightdeck's SKILL schema keeps every field and closed value set
of Aileron's (the facts in tests/data/aileron/). When that fixture is updated
to a newer Aileron commit, a new field or enum value fails here until
flightdeck accepts it or docs/decisions.md says why not."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

AILERON = json.loads(
    (
        Path(__file__).resolve().parents[1]
        / "data"
        / "aileron"
        / "flight-plan-manifest.facts.schema.json"
    ).read_text()
)["$defs"]
OURS = json.loads(
    resources.files("flightdeck.documents")
    .joinpath("schemas", "skill.schema.json")
    .read_text("utf-8")
)["$defs"]

# Aileron's $defs name -> flightdeck's
SAME = {
    "aileronBlock": "aileron",
    "actionRequirement": "actionRequirement",
    "environment": "environment",
    "trustContract": "trustContract",
    "credential": "credential",
    "input": "input",
    "output": "output",
    "lock": "lock",
}


def _props(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {}))


@pytest.mark.parametrize(("theirs", "ours"), sorted(SAME.items()))
def test_every_aileron_field_is_a_flightdeck_field(theirs: str, ours: str) -> None:
    missing = _props(AILERON[theirs]) - _props(OURS[ours])
    assert not missing, f"{ours} lacks Aileron's {sorted(missing)}"


def test_lock_items_and_step_kinds_keep_aileron_fields() -> None:
    image = AILERON["lock"]["properties"]["resolvedImages"]["items"]
    ours = OURS["lock"]["properties"]["resolvedImages"]["items"]
    assert _props(image) <= _props(ours)
    kinds = {s["properties"]["kind"]["const"]: _props(s) for s in AILERON["step"]["oneOf"]}
    branches = {
        b["if"]["properties"]["kind"]["const"]: set(b["then"]["properties"])
        for b in OURS["step"].get("allOf", [])
        if "if" in b and "const" in b["if"].get("properties", {}).get("kind", {})
    }
    assert set(kinds) == set(branches)
    for kind, fields in kinds.items():
        assert fields <= branches[kind], (kind, sorted(fields - branches[kind]))


def _enum(schema: dict[str, Any], *path: str) -> set[Any]:
    node: Any = schema
    for key in path:
        node = node[key]
    return set(node["enum"])


@pytest.mark.parametrize(
    "path",
    [
        ("credential", "properties", "kind"),
        ("credential", "properties", "placement"),
        ("trustContract", "properties", "effect"),
        ("output", "properties", "encoding"),
        ("input", "properties", "type"),
    ],
)
def test_closed_value_sets_are_the_same(path: tuple[str, ...]) -> None:
    assert _enum(AILERON, *path) == _enum(OURS, *path)
