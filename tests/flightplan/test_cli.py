"""The Flight Plan commands, run as processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.flightplan._plans import example_path

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck"


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


def test_lint_worked_example_clean_and_json_with_warnings() -> None:
    done = run("lint", example_path())
    assert done.returncode == 0, done.stdout + done.stderr
    done = run(
        "lint", "--format", "json", "--installed", "aileron:metrics.query_series", example_path()
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"] is True
    (diag,) = report["files"][0]["diagnostics"]
    assert (diag["code"], diag["severity"], diag["line"]) == (
        "flightplan.unsatisfied_action",
        "warning",
        43,
    )


def test_lint_error_exits_1_with_location(tmp_path: Path) -> None:
    bad = tmp_path / "SKILL.md"
    bad.write_text(
        example_path().read_text().replace("steps.render_csv.csv", "steps.render_csv.tsv")
    )
    done = run("lint", bad)
    assert done.returncode == 1
    assert "flightplan.unknown_step_output" in done.stdout
    assert "143:9" in done.stdout  # the `csv:` key of the summarize step


def test_graph_mermaid_and_dot() -> None:
    done = run("graph", example_path())
    assert done.returncode == 0 and done.stdout.startswith("flowchart LR")
    done = run("graph", example_path(), "--format", "dot")
    assert done.returncode == 0 and done.stdout.startswith("digraph")


def test_keys_freeze_verify_keyring_skills_end_to_end(tmp_path: Path) -> None:
    assert run("keys", "generate", "--out", tmp_path / "k").returncode == 0
    key, pub = tmp_path / "k" / "flightdeck.key", tmp_path / "k" / "flightdeck.pub"
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    done = run(
        "freeze",
        example_path(),
        "--no-code-pins",  # its drivers are nowhere: the example names no workspace
        "--publisher",
        "github://acme",
        "--version",
        "1.0.0",
        "--format",
        "json",
        env={"FLIGHTDECK_SIGNING_KEY": str(key)},
    )
    assert done.returncode == 0, done.stderr
    frozen = json.loads(done.stdout)
    assert frozen["created"] is True and frozen["version"] == "1.0.0"

    done = run("verify", "weekly-metrics-digest@1.0.0", "--format", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "verify.publisher_untrusted"

    assert run("keyring", "trust", "github://acme", "--key", pub).returncode == 0
    listed = json.loads(run("keyring", "list", "--format", "json").stdout)
    assert [e["publisher"] for e in listed] == ["github://acme"]
    done = run("verify", "weekly-metrics-digest")
    assert done.returncode == 0 and "verified" in done.stdout

    skills = json.loads(run("skills", "list", "--format", "json").stdout)
    assert [(s["name"], s["version"], s["publisher"]) for s in skills] == [
        ("weekly-metrics-digest", "1.0.0", "github://acme")
    ]
    assert skills[0]["content_hash"] == frozen["content_hash"]

    (Path(frozen["path"]) / "SKILL.md.sig").unlink()
    done = run("verify", "weekly-metrics-digest")
    assert done.returncode == 1 and "verify.signature_missing" in done.stderr
    assert run("keyring", "untrust", "github://acme").returncode == 0


def test_freeze_without_key_and_with_lint_errors_fail_cleanly(tmp_path: Path) -> None:
    done = run("freeze", example_path())
    assert done.returncode == 1 and "freeze.no_signing_key" in done.stderr
    assert "Traceback" not in done.stderr
    bad = tmp_path / "SKILL.md"
    bad.write_text(example_path().read_text().replace("aws-cli@2.x", "curl@8"))
    run("keys", "generate", "--out", tmp_path)
    done = run("freeze", bad, "--signing-key", tmp_path / "flightdeck.key")
    assert done.returncode == 1
    assert "freeze.invalid_plan" in done.stderr and "flightplan.unknown_tool" in done.stderr


def test_lint_reports_schema_and_lint_errors_together_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "SKILL.md"
    text = example_path().read_text()
    text = text.replace("effect: read", "effect: reed").replace("inputs.as_of", "inputs.as_at")
    bad.write_text(text)
    done = run("lint", "--format", "json", bad)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    codes = {d["code"] for d in json.loads(done.stdout)["files"][0]["diagnostics"]}
    assert "flightplan.unknown_input" in codes
    assert any(code.startswith("schema.") for code in codes)
