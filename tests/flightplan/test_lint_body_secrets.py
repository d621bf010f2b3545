"""Seed 003, credential sealing invariant: the frozen artifact carries no
secret material, and the markdown body is part of what is sealed."""

from __future__ import annotations

from pathlib import Path

from flightdeck.documents import load_document
from flightdeck.flightplan import lint_document

PLAN = (
    Path(__file__).resolve().parents[1]
    / "data/corpus/valid/skill/weekly-metrics-digest/weekly-metrics-digest.example.skill.md"
)


def test_credential_in_body_is_reported_at_its_line(tmp_path: Path) -> None:
    text = (
        PLAN.read_text() + "\nUse key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 for testing.\n"
    )
    path = tmp_path / "plan.skill.md"
    path.write_text(text)
    document = load_document(path).document
    assert document is not None
    diags = [d for d in lint_document(document) if d.code == "flightplan.secret_value"]
    assert len(diags) == 1
    assert diags[0].line == len(text.splitlines())
    assert diags[0].file == str(path)


def test_clean_body_has_no_findings() -> None:
    document = load_document(PLAN).document
    assert document is not None
    assert lint_document(document) == []
