"""`lint --workspace` and freeze check each action-call step against the
driver and TOOL.md launch would run (issue 15 item 4), as processes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli._run import run

DEMO = Path(__file__).resolve().parents[2] / "examples" / "flightplans" / "metrics-digest"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "plan"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _lint(plan: Path, *extra: str) -> tuple[int, list[dict[str, object]]]:
    proc = run("lint", "--format", "json", "--workspace", str(plan), *extra, str(plan / "SKILL.md"))
    assert "Traceback" not in proc.stderr
    [file] = json.loads(proc.stdout)["files"]
    return proc.returncode, file["diagnostics"]


def test_the_demo_plan_fits_its_drivers(tmp_path: Path) -> None:
    code, diagnostics = _lint(_copy(tmp_path))
    assert (code, [d for d in diagnostics if d["severity"] == "error"]) == (0, [])


def test_a_missing_driver_and_tool_are_located_at_the_action_ref(tmp_path: Path) -> None:
    plan = _copy(tmp_path)
    shutil.rmtree(plan / ".drivers" / "tracker")
    text = (plan / "SKILL.md").read_text()
    # The step's ref now names a tool the metrics driver does not implement.
    text = text.replace(
        "actionRef: aileron:metrics.query_series", "actionRef: aileron:metrics.nosuch"
    )
    text = text.replace("- ref: aileron:metrics.query_series", "- ref: aileron:metrics.nosuch")
    (plan / "SKILL.md").write_text(text)
    code, diagnostics = _lint(plan)
    assert code == 1
    found = {d["code"]: d for d in diagnostics}
    assert "lint.driver_not_found" in found and "lint.tool_not_implemented" in found
    for diag in (found["lint.driver_not_found"], found["lint.tool_not_implemented"]):
        assert str(diag["pointer"]).endswith("/actionRef") and diag["line"]


def _step_with(plan: Path, old: str, new: str) -> None:
    text = (plan / "SKILL.md").read_text()
    assert old in text
    (plan / "SKILL.md").write_text(text.replace(old, new, 1))


def test_missing_and_unknown_args_are_caught_before_launch(tmp_path: Path) -> None:
    plan = _copy(tmp_path)
    # create-issue's inputs are closed: {title, body}, both required.
    _step_with(
        plan,
        "        title: inputs.issue_title\n        body: steps.render_body.body\n",
        "        body: steps.render_body.body\n        severity: inputs.window_days\n",
    )
    code, diagnostics = _lint(plan)
    assert code == 1
    by_code = {d["code"]: d for d in diagnostics if str(d["code"]).startswith("lint.")}
    assert set(by_code) == {"lint.missing_arg", "lint.unknown_arg"}
    assert str(by_code["lint.unknown_arg"]["pointer"]).endswith("/args/severity")
    assert "'title'" in str(by_code["lint.missing_arg"]["message"])
    assert by_code["lint.unknown_arg"]["line"] and by_code["lint.missing_arg"]["line"]


def test_several_outputs_must_be_keys_the_tool_declares(tmp_path: Path) -> None:
    plan = _copy(tmp_path)
    _step_with(plan, "      outputs: [issue]\n", "      outputs: [id, permalink]\n")
    _, diagnostics = _lint(plan)
    [diag] = [d for d in diagnostics if d["code"] == "lint.output_not_provided"]
    assert "'permalink'" in str(diag["message"]) and str(diag["pointer"]).endswith("/outputs/1")


def test_freeze_refuses_what_lint_workspace_reports(tmp_path: Path, fd_home: Path) -> None:
    plan = _copy(tmp_path)
    shutil.rmtree(plan / ".drivers" / "tracker")
    key_dir = tmp_path / "keys"
    assert run("keys", "generate", "--out", str(key_dir)).returncode == 0
    key = next(key_dir.glob("*.key"))
    proc = run(
        "freeze",
        str(plan / "SKILL.md"),
        "--workspace",
        str(plan),
        "--signing-key",
        str(key),
        "--version",
        "1.0.0",
    )
    assert proc.returncode == 1 and "freeze.driver_not_found" in proc.stderr
    assert "SKILL.md:" in proc.stderr  # located in the plan
    assert not any((fd_home / "data").rglob("SKILL.md"))  # nothing stored


def test_an_argument_bound_to_a_value_of_another_type_is_caught(tmp_path: Path) -> None:
    plan = _copy(tmp_path)
    # create-issue takes a string title; window_days is a plan input of type
    # number; query_metrics.series is the array query-series declares.
    _step_with(
        plan,
        "        title: inputs.issue_title\n        body: steps.render_body.body\n",
        "        title: inputs.window_days\n        body: steps.query_metrics.series\n",
    )
    code, diagnostics = _lint(plan)
    assert code == 1
    found = {
        str(d["pointer"]).rsplit("/", 1)[1]: d for d in diagnostics if d["code"] == "lint.arg_type"
    }
    assert set(found) == {"title", "body"}
    assert "inputs.window_days, a number" in str(found["title"]["message"])
    assert "takes string" in str(found["title"]["message"])
    assert "steps.query_metrics.series, a array" in str(found["body"]["message"])
    assert all(
        str(d["pointer"]).startswith("/aileron/steps/3/args/") and d["line"] for d in found.values()
    )


def test_a_number_bound_to_an_integer_input_is_not_a_mismatch(tmp_path: Path) -> None:
    plan = _copy(tmp_path)
    tool = plan / ".tools" / "query-series" / "TOOL.md"
    text = tool.read_text()
    assert "window_days: { type: number," in text
    tool.write_text(text.replace("window_days: { type: number,", "window_days: { type: integer,"))
    code, diagnostics = _lint(plan)
    assert (code, [d for d in diagnostics if d["severity"] == "error"]) == (0, [])
    # ... while a boolean there is not.
    tool.write_text(text.replace("window_days: { type: number,", "window_days: { type: boolean,"))
    code, diagnostics = _lint(plan)
    assert code == 1 and [d["code"] for d in diagnostics] == ["lint.arg_type"]


def test_freeze_refuses_an_argument_of_another_type(tmp_path: Path, fd_home: Path) -> None:
    plan = _copy(tmp_path)
    _step_with(plan, "        title: inputs.issue_title\n", "        title: inputs.csv_columns\n")
    key_dir = tmp_path / "keys"
    assert run("keys", "generate", "--out", str(key_dir)).returncode == 0
    proc = run(
        "freeze",
        str(plan / "SKILL.md"),
        "--workspace",
        str(plan),
        "--signing-key",
        str(next(key_dir.glob("*.key"))),
        "--format",
        "json",
    )
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "freeze.step_mismatch" and "'title'" in error["message"]
    assert "SKILL.md:" in str(error.get("where") or error.get("location"))
    assert not any((fd_home / "data").rglob("SKILL.md"))
