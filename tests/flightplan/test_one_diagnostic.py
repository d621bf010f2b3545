"""One mistake, one diagnostic: a bad binding is reported once by validate,
lint and load_plan (schema.pattern and flightplan.invalid_binding merged)."""

from __future__ import annotations

from pathlib import Path

from flightdeck.documents import Diagnostic
from flightdeck.flightplan import load_plan
from flightdeck.flightplan._emit import emit_skill
from flightdeck.validation import validate_paths
from tests.flightplan._plans import example_body, example_data

POINTER = "/aileron/steps/0/args/window_days"


def _bad_binding(tmp_path: Path) -> Path:
    data = example_data()
    data["aileron"]["steps"][0]["args"]["window_days"] = "7 days"
    path = tmp_path / "SKILL.md"
    path.write_text(emit_skill(data, example_body()), encoding="utf-8")
    return path


def _at_pointer(diags: tuple[Diagnostic, ...] | list[Diagnostic]) -> list[str]:
    return [d.code for d in diags if d.pointer == POINTER]


def test_a_bad_binding_is_one_diagnostic_in_lint(tmp_path: Path) -> None:
    load = load_plan(_bad_binding(tmp_path))
    assert _at_pointer(load.diagnostics) == ["flightplan.invalid_binding"]
    assert not load.ok


def test_a_bad_binding_is_one_diagnostic_in_validate(tmp_path: Path) -> None:
    report = validate_paths([_bad_binding(tmp_path)])
    (file,) = report.files
    assert _at_pointer(file.diagnostics) == ["flightplan.invalid_binding"]
    assert not report.ok


def test_schema_errors_elsewhere_are_kept(tmp_path: Path) -> None:
    data = example_data()
    data["aileron"]["steps"][0]["args"]["window_days"] = "7 days"
    data["aileron"]["outputs"][0]["mimeType"] = 7
    path = tmp_path / "SKILL.md"
    path.write_text(emit_skill(data, example_body()), encoding="utf-8")
    codes = [d.code for d in load_plan(path).diagnostics]
    assert "schema.type" in codes and "flightplan.invalid_binding" in codes
