"""A rollback refusal's hint names options that exist: `launch NAME@VERSION
--allow-rollback` runs the older version, as the hint says (issue 28 item 5)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flightdeck.flightplan import SkillStore, freeze_plan, generate_keys, verify_plan

from .conftest import write_plan

NAME = "rollback-plan"


def _fd(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flightdeck", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def two_versions(tmp_path: Path) -> Path:
    keys = generate_keys(tmp_path / "keys")
    for version in ("1.0.0", "1.1.0"):
        source = tmp_path / version
        source.mkdir()
        write_plan(
            source,
            name=NAME,
            inputs=[{"name": "t", "type": "string", "resolution": {"rule": "literal"}}],
            steps=[
                {"id": "x", "kind": "transform", "bindings": {"t": "inputs.t"}, "outputs": ["o"]}
            ],
        )
        freeze_plan(source / "SKILL.md", signing_key=keys.private_path, version=version)
    assert verify_plan(NAME).version == "1.1.0"  # the newest is now the high-water mark
    return tmp_path


def test_the_rollback_hint_of_launch_is_a_command_that_runs(two_versions: Path) -> None:
    refused = _fd("launch", f"{NAME}@1.0.0", "--input", "t=x", "--format", "json", cwd=two_versions)
    assert refused.returncode == 1, refused.stderr
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "verify.rollback"
    hint = error["hint"]
    suggested = f"launch {NAME}@1.0.0 --allow-rollback"
    assert suggested in hint and f"verify {NAME}@1.0.0 --allow-rollback" in hint
    done = _fd(*shlex.split(suggested), "--input", "t=x", "--format", "json", cwd=two_versions)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    # The high-water mark stays: without the flag the older version is refused again.
    again = _fd("launch", f"{NAME}@1.0.0", "--input", "t=x", "--format", "json", cwd=two_versions)
    assert json.loads(again.stdout)["error"]["code"] == "verify.rollback"


def test_allow_rollback_needs_a_named_version(two_versions: Path) -> None:
    shutil.rmtree(SkillStore().find(NAME, "1.1.0").path)  # NAME now names the older one
    done = _fd(
        "launch", NAME, "--allow-rollback", "--input", "t=x", "--format", "json",
        cwd=two_versions,
    )  # fmt: skip
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "verify.rollback"
