"""Test data: the worked example and generators of plans."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from flightdeck.documents import Document, DocumentKind

_LOCAL = Path(__file__).parent / "data" / "weekly-metrics-digest.example.skill.md"


def example_path() -> Path:
    """The worked example from the spec's authors (copied into the repo)."""
    return _LOCAL


def example_text() -> str:
    return example_path().read_text("utf-8")


def split(text: str) -> tuple[dict[str, Any], str]:
    """Frontmatter data and body, read with PyYAML (no schema involved)."""
    assert text.startswith("---\n")
    end = text.index("\n---\n", 3)
    data = yaml.safe_load(text[4 : end + 1])
    assert isinstance(data, dict)
    return data, text[end + 5 :]


@functools.cache
def _example() -> tuple[dict[str, Any], str]:
    # Parsed once: PyYAML's pure-Python loader made this most of the time of
    # every test that freezes a fresh copy of the example.
    return split(example_text())


def example_data() -> dict[str, Any]:
    return copy.deepcopy(_example()[0])


def example_body() -> str:
    return _example()[1]


def document(data: dict[str, Any], body: str = "# Plan\n") -> Document:
    return Document(kind=DocumentKind.SKILL, data=data, body=body)


def chain_plan(steps: int, *, name: str = "generated-plan") -> tuple[dict[str, Any], str]:
    """A valid plan of `steps` transforms in a chain, plus an action-call head."""
    action = copy.deepcopy(example_data()["aileron"]["requires"]["actions"][0])
    items: list[dict[str, Any]] = [
        {
            "id": "s0",
            "kind": "action-call",
            "actionRef": action["ref"],
            "args": {"window_days": "inputs.window_days"},
            "outputs": ["out"],
        }
    ]
    for index in range(1, steps):
        items.append(
            {
                "id": f"s{index}",
                "kind": "transform",
                "bindings": {"data": f"steps.s{index - 1}.out"},
                "outputs": ["out"],
            }
        )
    items[-1]["materializesOutput"] = "result.json"
    data = {
        "name": name,
        "description": f"A generated chain of {steps} steps.",
        "aileron": {
            "schemaVersion": "aileron.flightplan.v1",
            "requires": {"actions": [action]},
            "environment": {"tools": ["jq@1.7"]},
            "inputs": [
                {"name": "window_days", "type": "number", "resolution": {"rule": "literal"}}
            ],
            "outputs": [
                {
                    "name": "result.json",
                    "mimeType": "application/json",
                    "encoding": "utf-8",
                    "publish": {"target": "file", "path": "result.json"},
                }
            ],
            "steps": items,
        },
    }
    return data, f"# {name}\n\nGenerated.\n"
