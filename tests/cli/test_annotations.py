"""`--format github` and `--format sarif`: diagnostics the way CI systems read them.

The SARIF output is checked against the OASIS SARIF 2.1.0 schema itself
(tests/data/sarif, provenance there); the GitHub lines against the
workflow-command grammar GitHub documents (`::level props::message`, with
`%`, CR, LF escaped in the message and also `:` and `,` in property values).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft4Validator

from flightdeck.cli._annotations import github_lines, sarif_log
from flightdeck.documents import Diagnostic, Severity
from tests.cli._run import run

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text("utf-8")
)
BAD = "---\nschema: action/v1\nid: storage:commit\ndescription: Commit.\napproval: sometimes\n---\n"
PLAN = Path(__file__).parents[2] / "examples" / "flightplans" / "metrics-digest" / "SKILL.md"
_LINE = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def _unescape(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    match = _LINE.match(line)
    assert match, line
    props = dict(part.split("=", 1) for part in match.group(2).split(","))
    return match.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(match.group(3))


def test_validate_github_annotation_points_at_the_line(tmp_path: Path) -> None:
    (tmp_path / "ACTION.md").write_text(BAD)
    proc = run("validate", "--format", "github", "ACTION.md", cwd=tmp_path)
    assert proc.returncode == 1
    [line] = proc.stdout.splitlines()
    level, props, message = _parse(line)
    assert level == "error"
    assert props == {"file": "ACTION.md", "line": "5", "col": "1", "title": "schema.enum"}
    assert "[/approval]" in message


def test_validate_sarif_is_a_valid_sarif_log(tmp_path: Path) -> None:
    (tmp_path / "ACTION.md").write_text(BAD)
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "ACTION.md").write_text(BAD.replace("approval: sometimes\n", ""))
    proc = run("validate", "--format", "sarif", ".", cwd=tmp_path)
    assert proc.returncode == 1
    log = json.loads(proc.stdout)
    assert list(Draft4Validator(SCHEMA).iter_errors(log)) == []
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "schema.enum" and result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "ACTION.md", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 5, "startColumn": 1}
    assert [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]] == ["schema.enum"]


def test_clean_files_give_no_annotations_and_an_empty_sarif_run(tmp_path: Path) -> None:
    (tmp_path / "ACTION.md").write_text(BAD.replace("approval: sometimes\n", ""))
    proc = run("validate", "--format", "github", "ACTION.md", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "")
    proc = run("validate", "--format", "sarif", "ACTION.md", cwd=tmp_path)
    log = json.loads(proc.stdout)
    assert log["runs"][0]["results"] == [] and not list(Draft4Validator(SCHEMA).iter_errors(log))


def test_lint_speaks_both_formats(tmp_path: Path) -> None:
    broken = tmp_path / "SKILL.md"
    text = PLAN.read_text("utf-8")
    broken.write_text(text.replace(": steps.query_metrics.series", ": steps.nosuch.series", 1))
    proc = run("lint", "--format", "github", "SKILL.md", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    parsed = [_parse(line) for line in proc.stdout.splitlines()]
    assert any(level == "error" and props["file"] == "SKILL.md" for level, props, _ in parsed)
    assert all("line" in props for _, props, _ in parsed)
    proc = run("lint", "--format", "sarif", "SKILL.md", cwd=tmp_path)
    log = json.loads(proc.stdout)
    assert not list(Draft4Validator(SCHEMA).iter_errors(log))
    assert log["runs"][0]["results"]


_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)


@given(file=_text.filter(bool), message=_text, code=_text.filter(bool), hint=_text)
def test_github_escaping_round_trips(file: str, message: str, code: str, hint: str) -> None:
    diag = Diagnostic(code, message, Severity.WARNING, file=file, line=3, column=7, hint=hint)
    [line] = github_lines([(Path(file), [diag])])
    assert "\n" not in line and "\r" not in line
    level, props, parsed = _parse(line)
    assert level == "warning" and props["title"] == code and props["line"] == "3"
    expected = message + (f"\nhint: {hint}" if hint else "")
    assert parsed == expected


def test_sarif_info_is_a_note_and_absolute_paths_are_file_uris(tmp_path: Path) -> None:
    outside = Path("/nonexistent dir/TOOL.md")
    diag = Diagnostic("tool.orphan", "no action", Severity.INFO, file=str(outside))
    log = sarif_log([(outside, [diag])])
    assert not list(Draft4Validator(SCHEMA).iter_errors(log))
    [result] = log["runs"][0]["results"]
    assert result["level"] == "note"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file:///nonexistent%20dir/TOOL.md"
