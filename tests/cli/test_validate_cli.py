"""`flightdeck validate` and `flightdeck schema` as processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli._run import run

GOOD = "---\nschema: action/v1\nid: storage:commit\ndescription: Commit.\n---\n"
BAD = "---\nschema: action/v1\nid: storage:commit\ndescription: Commit.\napproval: sometimes\n---\n"


def _tree(tmp_path: Path) -> Path:
    for name, text in [("good", GOOD), ("bad", BAD)]:
        folder = tmp_path / ".actions" / name
        folder.mkdir(parents=True)
        (folder / "ACTION.md").write_text(text)
    return tmp_path


def test_exit_zero_when_all_valid(tmp_path: Path) -> None:
    path = tmp_path / "ACTION.md"
    path.write_text(GOOD)
    proc = run("validate", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 file(s) valid" in proc.stdout


def test_exit_one_with_located_diagnostic_when_invalid(tmp_path: Path) -> None:
    proc = run("validate", str(_tree(tmp_path)))
    assert proc.returncode == 1
    bad = str(tmp_path / ".actions" / "bad" / "ACTION.md")
    assert bad in proc.stdout
    assert "5:1" in proc.stdout and "schema.enum" in proc.stdout
    assert "1 of 2 file(s) invalid" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_no_colour_when_not_a_terminal(tmp_path: Path) -> None:
    proc = run("validate", str(_tree(tmp_path)))
    assert "schema.enum" in proc.stdout  # the report is there, only uncoloured
    assert "\x1b[" not in proc.stdout and "\x1b[" not in proc.stderr


def test_json_report_shape(tmp_path: Path) -> None:
    proc = run("validate", "--format", "json", str(_tree(tmp_path)))
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert report["summary"] == {
        "files": 2,
        "valid": 1,
        "invalid": 1,
        "skipped": 0,
        "errors": 1,
        "warnings": 0,
    }
    diag = next(f for f in report["files"] if not f["valid"])["diagnostics"][0]
    assert diag["code"] == "schema.enum"
    assert (diag["line"], diag["column"], diag["pointer"]) == (5, 1, "/approval")
    assert "always" in diag["message"]


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    cases = [
        (("validate", str(tmp_path / "missing")), "missing"),
        (("validate", "--no-such-flag", str(tmp_path)), "--no-such-flag"),
        (("validate",), "Usage:"),
    ]
    for args, needle in cases:
        proc = run(*args)
        assert proc.returncode == 2, args
        assert needle in proc.stderr and "Traceback" not in proc.stderr, args


def test_as_kind_overrides_detection(tmp_path: Path) -> None:
    path = tmp_path / "block.md"
    path.write_text("---\ninputs: {type: object}\noutputs: {type: object}\n---\n")
    assert run("validate", "--as", "io", str(path)).returncode == 0
    assert run("validate", "--as", "action", str(path)).returncode == 1


def test_schema_command_prints_and_lists() -> None:
    listing = run("schema")
    assert listing.returncode == 0
    assert {"action", "tool", "driver", "driver-sdk", "skill", "io", "runner"} <= set(
        listing.stdout.split()
    )
    action = json.loads(run("schema", "action").stdout)
    assert action["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert run("schema", "nope").returncode == 2


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0 and "0.1.0" in proc.stdout


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_validate_reports_narrowing_violations_at_the_implementor(tmp_path: Path) -> None:
    """AIP-39: implementors MUST NOT widen their action's floors; validate
    reports each violation at the implementor's file:line."""
    import shutil

    workspace = tmp_path / "ws"
    shutil.copytree(EXAMPLES / "workspace", workspace)
    tool = workspace / ".tools" / "notes-append" / "TOOL.md"
    text = tool.read_text().replace("approval: always", "approval: auto")
    tool.write_text(text.replace("risk_level: 1", "risk_level: 0"))
    proc = run("validate", "--format", "json", str(workspace))
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    diags = {d["code"]: d for f in report["files"] for d in f["diagnostics"]}
    assert diags["relaxes_approval"]["file"] == str(tool)
    assert diags["relaxes_approval"]["line"] == 10
    assert diags["lowers_risk_level"]["line"] == 11


def test_validate_lints_flight_plans(tmp_path: Path) -> None:
    plan = (EXAMPLES / "flightplans" / "metrics-digest" / "SKILL.md").read_text()
    broken = tmp_path / "SKILL.md"
    assert "rows: steps.query_metrics.series" in plan
    broken.write_text(
        plan.replace("rows: steps.query_metrics.series", "rows: steps.nowhere.series")
    )
    proc = run("validate", "--format", "json", str(broken))
    assert proc.returncode == 1
    codes = [d["code"] for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
    assert "flightplan.unknown_step" in codes, codes


def test_bundled_examples_are_valid() -> None:
    proc = run("validate", str(EXAMPLES))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_inspect_resolves_against_the_files_own_workspace() -> None:
    """`inspect` run from anywhere finds the action in the tool's workspace."""
    tool = EXAMPLES / "workspace" / ".tools" / "notes-append" / "TOOL.md"
    proc = run("inspect", "--format", "json", str(tool), cwd=Path("/"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["implements"]["id"] == "notes:append"


def test_colour_on_a_terminal(tmp_path: Path) -> None:
    """Human output is coloured only when stdout is a terminal."""
    import os
    import pty
    import subprocess

    from tests.cli._run import FLIGHTDECK

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(FLIGHTDECK), "validate", str(_tree(tmp_path))],
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    output = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "\x1b[" in output and "schema.enum" in output


def test_validate_reports_driver_template_errors_at_their_line(tmp_path: Path) -> None:
    """AIP-33: templates are parsed at registration; `validate` reports a
    syntax error at the template's file:line without importing anything."""
    import shutil

    workspace = tmp_path / "drivers"
    shutil.copytree(EXAMPLES / "drivers", workspace)
    driver = workspace / ".drivers" / "openai-sdk" / "DRIVER.md"
    lines = driver.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if "${input.messages}" in line)
    lines[index] = lines[index].replace("${input.messages}", "${input.messages | nope(}")
    driver.write_text("\n".join(lines) + "\n")
    proc = run("validate", "--format", "json", str(driver))
    assert proc.returncode == 1
    diags = [d for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
    template = [d for d in diags if d["code"] == "template_error"]
    assert template and template[0]["line"] == index + 1


def test_the_run_does_not_collect_what_start_up_loaded(tmp_path: Path) -> None:
    """Collections during a run need not walk the modules and schemas loaded
    before it: they are frozen (`gc.freeze`) when the walk starts."""
    import subprocess
    import sys

    (tmp_path / "ACTION.md").write_text(GOOD)
    probe = (
        "import gc, sys\n"
        "import flightdeck.cli.validate as v\n"
        "real = v.validate_paths\n"
        "def walk(*args, **kwargs):\n"
        "    print('frozen', gc.get_freeze_count() > 1000, file=sys.stderr, flush=True)\n"
        "    return real(*args, **kwargs)\n"
        "v.validate_paths = walk\n"
        "from flightdeck.cli import main\n"
        f"main(['validate', {str(tmp_path / 'ACTION.md')!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "frozen True" in done.stderr.splitlines()
