"""`flightdeck inspect` on a DRIVER.md, as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.drivers._ws import add_driver, sdk_driver, workspace

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).parent / "flightdeck")
TEXTSTATS = "examples/drivers/.drivers/textstats-local/DRIVER.md"


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLIGHTDECK_HOME": str(home), "NO_COLOR": "1"}
    env.pop("FLIGHTDECK_LIBRARY_PATH", None)
    return subprocess.run(
        [EXE, "inspect", *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
    )


def test_inspect_prints_the_driver_view(tmp_path: Path) -> None:
    proc = run(TEXTSTATS, home=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("driver textstats-local")
    for line in ("package_manager local", "policy_tags     self-hosted, pii-safe, no-third-party"):
        assert line in out
    assert "implements[0]  text.stats  (../../.tools/text-stats/TOOL.md)" in out
    assert "sdk.function_ref   countWords" in out
    assert "approval      auto  [default]" in out


def test_inspect_driver_json(tmp_path: Path) -> None:
    proc = run("--format", "json", "examples/drivers/.drivers/openai-sdk", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kind"] == "driver" and data["ok"] is True
    assert data["identity"]["egress"] == ["api.openai.com"]
    (entry,) = data["implements"]
    assert entry["tool"]["id"] == "chat.completion" and entry["action"]["id"] == "llm:chat"
    assert entry["view"]["risk_level"] == {"value": 1, "from": "action"}
    assert entry["binding"]["function_ref"] == "Client.chat.completions.create"


def test_inspect_driver_problem_exits_1_at_file_line(tmp_path: Path) -> None:
    path = add_driver(workspace(tmp_path / "ws"), sdk_driver(tool="no.such.tool"))
    proc = run(str(path), home=tmp_path)
    as_json = run("--format", "json", str(path), home=tmp_path)
    assert proc.returncode == 1 and as_json.returncode == 1
    (diag,) = json.loads(as_json.stdout)["diagnostics"]
    assert diag["code"] == "tool_unresolvable" and diag["file"] == str(path)
    assert str(path) in proc.stdout  # the title names the file; each problem its line:col
    assert f"{diag['line']}:{diag['column']}  error" in proc.stdout
    assert "tool_unresolvable" in proc.stdout
