"""`import acp` the cheap way (flightdeck.agent.acp._library) gives models that
validate and serialise exactly as a normal import's, and degrades to a normal
import when pydantic's internals are not what it expects or the fast import
fails. Each import runs in a fresh interpreter (tests/agent_acp/_schema_probe.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("_schema_probe.py")


def _probe(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(PROBE), mode],
        capture_output=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def normal() -> dict[str, Any]:
    return _probe("normal")


def test_fast_import_validates_and_serialises_as_a_normal_one(normal: dict[str, Any]) -> None:
    fast = _probe("fast")
    # the pinned pydantic has both internals: the fast path really ran
    assert fast["applied"] == ["defer_build", "extract_docstrings_from_cls"]
    assert fast["described"] is None and normal["described"]  # docstrings were skipped
    assert len(fast["results"]) == len(normal["results"]) > 20
    for got, want in zip(fast["results"], normal["results"], strict=True):
        assert got == want
    assert any("errors" in r["json"] for r in normal["results"])  # invalid ones too
    # the settings were put back: a model defined afterwards is built at once
    # and keeps its field docstrings
    assert fast["later"] == normal["later"] == [True, "the x"]


@pytest.mark.parametrize("mode", ["no-internals", "failing"])
def test_without_the_internals_or_after_a_failure_acp_imports_normally(
    mode: str, normal: dict[str, Any]
) -> None:
    result = _probe(mode)
    assert result["applied"] == []
    assert result["described"] == normal["described"]
    assert result["results"] == normal["results"]
    assert result["later"] == [True, "the x"]
