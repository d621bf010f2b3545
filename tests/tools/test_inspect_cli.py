"""`flightdeck inspect` as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXE = ROOT / ".venv" / "bin" / "flightdeck"
STANDARD = ROOT / "tests" / "data" / "corpus" / "libraries" / "standard"
TOOL = """---
name: Git push
id: git.push
description: Push commits.
version: 1.0.0
inputs: {type: object}
outputs: {type: object}
implements: "@agentik/actions-standard/storage-push@^1"
approval: always
---
"""


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLIGHTDECK_HOME": str(cwd / ".home")}
    env.pop("FLIGHTDECK_LIBRARY_PATH", None)
    exe = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "flightdeck"]
    return subprocess.run(
        [*exe, "inspect", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_inspect_tool_text_and_json(tmp_path: Path) -> None:
    (tmp_path / "TOOL.md").write_text(TOOL)
    text = _run("TOOL.md", "--library", str(STANDARD), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "storage:push 1.0.0" in text.stdout and "[implementor]" in text.stdout
    out = _run("TOOL.md", "--library", str(STANDARD), "--format", "json", cwd=tmp_path)
    data = json.loads(out.stdout)
    assert data["view"]["approval"] == {"value": "always", "from": "implementor"}
    assert data["view"]["mutates"]["value"] == ["storage:*", "network:*"]


def test_inspect_unresolvable_exits_1_with_what_was_tried(tmp_path: Path) -> None:
    (tmp_path / "TOOL.md").write_text(TOOL)
    out = _run("TOOL.md", "--format", "json", cwd=tmp_path)
    assert out.returncode == 1
    diag = json.loads(out.stdout)["diagnostics"][0]
    assert diag["code"] == "action_ref_unresolvable" and diag["line"] == 8
    assert "no action library on the search path" in diag["message"]
    assert "Traceback" not in out.stderr


def test_inspect_reads_the_library_path_from_flightdeck_toml(tmp_path: Path) -> None:
    (tmp_path / "TOOL.md").write_text(TOOL)
    (tmp_path / "flightdeck.toml").write_text(f'[library]\npaths = ["{STANDARD}"]\n')
    out = _run("TOOL.md", cwd=tmp_path)
    assert out.returncode == 0, out.stdout
    assert "storage:push 1.0.0" in out.stdout  # resolved through the configured library
    assert not (tmp_path / "flightdeck.lock").exists(), "inspect never writes the lock"


def test_inspect_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    out = _run("nope.md", cwd=tmp_path)
    assert out.returncode == 2
    assert "nope.md" in out.stderr and "Traceback" not in out.stderr
