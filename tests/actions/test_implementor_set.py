"""A set of TOOL implementors of one action (tests/actions/data/ws), each violating
one floor, checked through the validate hook and through `flightdeck validate`.

TOOL.md cannot declare fires_events, category or target_kind (the schema rejects
them), so those three floors are covered by tests/actions/test_narrowing.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from flightdeck.actions import CheckContext, check_document
from flightdeck.documents import load_document

WS = Path(__file__).resolve().parent / "data" / "ws"
ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((WS / ".tools").glob("*/TOOL.md"))


def _expected(path: Path) -> list[str]:
    found = re.search(r"<!-- expect: (.*?) -->", path.read_text())
    assert found is not None
    return sorted(c for c in found.group(1).split(",") if c)


@pytest.mark.parametrize("path", CASES, ids=[p.parent.name for p in CASES])
def test_each_implementor_produces_exactly_its_codes(path: Path) -> None:
    doc = load_document(path).document
    assert doc is not None
    diags = check_document(doc, CheckContext(workspace=WS))
    assert sorted(d.code for d in diags) == _expected(path)
    for d in diags:
        assert d.file == str(path) and d.line is not None and d.line > 7


def test_the_set_covers_every_floor_a_tool_can_declare() -> None:
    codes = {c for p in CASES for c in _expected(p)}
    assert codes == {
        "drops_mutates",
        "lowers_risk_level",
        "relaxes_approval",
        "drops_required_network",
        "drops_required_secrets",
        "drops_required_tools",
    }


def test_flightdeck_validate_reports_the_same_codes_at_file_and_line(tmp_path: Path) -> None:
    env = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path)}
    proc = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "flightdeck"), "validate", "--format", "json", str(WS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    by_file: dict[str, list[str]] = {}
    for entry in report["files"]:
        for d in entry["diagnostics"]:
            if d["severity"] == "error":
                assert d["line"] is not None
                by_file.setdefault(d["file"], []).append(d["code"])
    for path in CASES:
        assert sorted(by_file.get(str(path), [])) == _expected(path), path.parent.name
