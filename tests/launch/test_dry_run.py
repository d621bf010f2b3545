"""`launch --dry-run`: what a launch would decide, with nothing done (issue 15 item 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli._run import run

DEMO = Path(__file__).resolve().parents[2] / "examples" / "flightplans" / "metrics-digest"
PUBLISHER = "github://flightdeck/examples"
TOKEN = "dry-run-tracker-token-4f1c"


def _frozen(tmp_path: Path) -> Path:
    plan = tmp_path / "plan"
    shutil.copytree(DEMO, plan, ignore=shutil.ignore_patterns("__pycache__"))
    keys = tmp_path / "keys"
    assert run("keys", "generate", "--out", str(keys), "--name", "demo").returncode == 0
    assert run("keyring", "trust", PUBLISHER, "--key", str(keys / "demo.pub")).returncode == 0
    proc = run(
        "freeze",
        str(plan / "SKILL.md"),
        "--workspace",
        str(plan),
        "--signing-key",
        str(keys / "demo.key"),
        "--publisher",
        PUBLISHER,
        "--version",
        "1.0.0",
    )
    assert proc.returncode == 0, proc.stderr
    return plan


def _state(home: Path) -> dict[str, bytes]:
    data = home / "data"
    return {
        str(p.relative_to(data)): p.read_bytes()
        for p in sorted(data.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_dry_run_shows_the_launch_and_changes_nothing(tmp_path: Path, fd_home: Path) -> None:
    plan = _frozen(tmp_path)
    before = _state(fd_home)
    assert not any(name.startswith(("runs", "audit", "trust")) for name in before)
    proc = run(
        "launch",
        "metrics-digest@1.0.0",
        "--workspace",
        str(plan),
        "--dry-run",
        "--approve",
        "file_issue",
        "--format",
        "json",
        env={"FLIGHTDECK_SECRET_TRACKER": TOKEN},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["dry_run"] is True and report["ok"] is True and report["signed"] is True
    steps = {step["id"]: step for step in report["steps"]}
    assert steps["file_issue"]["approval"].startswith("approved")
    assert steps["file_issue"]["credential"] == {
        "kind": "api-key",
        "found": True,
        "reference": "secret://tracker/digest-bot",
    }
    assert steps["file_issue"]["driver"].startswith("create-issue@")
    assert report["inputs"]["active_metric_set"].startswith("<read at launch> aileron:metrics.")
    # No run, no audit record, no trust state, no output: the data dir is as it was.
    assert _state(fd_home) == before


def test_dry_run_lists_what_would_stop_the_launch(tmp_path: Path, fd_home: Path) -> None:
    plan = _frozen(tmp_path)
    proc = run("launch", "metrics-digest@1.0.0", "--workspace", str(plan), "--dry-run")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "credential api-key: MISSING" in proc.stdout
    assert "credential.missing" in proc.stdout
    assert "approval:" in proc.stdout and "nothing ran" not in proc.stdout


def test_dry_run_refuses_changed_code_like_a_launch(tmp_path: Path, fd_home: Path) -> None:
    plan = _frozen(tmp_path)
    module = plan / "packages" / "localtracker" / "__init__.py"
    module.write_text(module.read_text() + "\n# edited after freeze\n")
    proc = run("launch", "metrics-digest@1.0.0", "--workspace", str(plan), "--dry-run")
    assert proc.returncode == 1 and "launch.code_changed" in proc.stderr
