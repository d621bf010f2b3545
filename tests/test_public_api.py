"""The top-level public surface is pinned, lazy, and complete."""

from __future__ import annotations

import subprocess
import sys

import flightdeck

EXPECTED = [
    "ActionHandle",
    "Diagnostic",
    "Document",
    "DocumentKind",
    "IOHandle",
    "LoadResult",
    "SdkDriver",
    "ToolHandle",
    "__version__",
    "call_tool",
    "defineAction",
    "defineDriver",
    "defineIO",
    "defineTool",
    "define_action",
    "define_driver",
    "define_io",
    "define_tool",
    "load_action",
    "load_document",
    "load_driver",
    "load_tool",
    "parse_document",
    "validate_paths",
]


def test_exported_names_are_exactly_the_public_ones() -> None:
    assert flightdeck.__all__ == EXPECTED
    assert sorted([*flightdeck._LAZY, "__version__"]) == EXPECTED


def test_every_exported_name_resolves() -> None:
    for name in flightdeck.__all__:
        assert getattr(flightdeck, name) is not None


def test_spec_canonical_names_are_aliases() -> None:
    assert flightdeck.defineAction is flightdeck.define_action
    assert flightdeck.defineIO is flightdeck.define_io
    assert flightdeck.defineTool is flightdeck.define_tool
    assert flightdeck.defineDriver is flightdeck.define_driver


def test_import_is_cheap_and_side_effect_free() -> None:
    code = (
        "import sys, flightdeck; "
        "heavy = [m for m in ('jsonschema', 'yaml', 'anthropic', 'openai', 'httpx') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
