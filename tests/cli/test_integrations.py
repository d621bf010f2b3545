"""The integrations as their hosts run them: pre-commit's `try-repo`, and the
GitHub Action's own shell steps (its file checked against GitHub's action schema)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BAD_ACTION = (
    "---\nschema: action/v1\nid: storage:commit\ndescription: Commit.\napproval: sometimes\n---\n"
)
PLAN = ROOT / "examples" / "flightplans" / "metrics-digest" / "SKILL.md"


def _sample_repo(path: Path, *, broken: bool) -> Path:
    (path / ".actions" / "commit").mkdir(parents=True)
    text = BAD_ACTION if broken else BAD_ACTION.replace("approval: sometimes\n", "")
    (path / ".actions" / "commit" / "ACTION.md").write_text(text)
    plan = PLAN.read_text("utf-8")
    if broken:
        plan = plan.replace(": steps.query_metrics.series", ": steps.nosuch.series", 1)
    (path / "plans" / "digest").mkdir(parents=True)
    (path / "plans" / "digest" / "SKILL.md").write_text(plan)
    return path


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="pre-commit try-repo needs a git checkout")
def test_pre_commit_hooks_run_through_try_repo(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path / "sample", broken=True)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "sample", cwd=repo)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    # Both hooks ran, both failed, each on its own finding.
    assert "flightdeck validate" in out and "flightdeck lint" in out
    assert out.count("- exit code: 1") == 2, out
    assert "schema.enum" in out and "steps.nosuch" in out


def test_action_yml_is_a_valid_github_action() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-actions",
            str(ROOT / "action.yml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _run_action_steps(repo: Path, paths: str) -> list[subprocess.CompletedProcess[str]]:
    """Run the action's flightdeck steps with bash the way GitHub runs `shell: bash`
    (`bash --noprofile --norc -eo pipefail`); setup-python and the install step are
    what this test environment already is."""
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    results = []
    bin_dir = str(Path(sys.executable).parent)
    for step in action["runs"]["steps"]:
        if "run" not in step or "pip install" in step["run"]:
            continue
        env = {
            **os.environ,
            "PATH": bin_dir + os.pathsep + os.environ["PATH"],
            **{k: v.replace("${{ inputs.paths }}", paths) for k, v in step.get("env", {}).items()},
        }
        results.append(
            subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        )
    return results


def test_action_steps_annotate_a_broken_repository(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path, broken=True)
    validate, lint = _run_action_steps(repo, ".")
    assert validate.returncode == 1 and lint.returncode != 0
    assert "::error file=.actions/commit/ACTION.md,line=5,col=1,title=schema.enum::" in (
        validate.stdout
    )
    assert lint.stdout.startswith("::error file=plans/digest/SKILL.md,line=")


def test_action_steps_pass_a_clean_repository(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path, broken=False)
    results = _run_action_steps(repo, ".")
    assert [r.returncode for r in results] == [0, 0], [r.stdout + r.stderr for r in results]
