"""`flightdeck agent --list-tools` as a process: what is loaded and from where."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.agent._process import FLIGHTDECK
from tests.agent_ext._common import make_ws, stdio_server_toml
from tests.agent_ext._manifest_ws import manifest_workspace


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLIGHTDECK, "agent", "--list-tools", *args], capture_output=True, text=True, timeout=60
    )


def test_list_tools_json_shows_every_tool_with_its_source(tmp_path: Path) -> None:
    broken = '[mcp.servers.ghost]\ncommand = "/nonexistent/server"\n'
    ws = manifest_workspace(make_ws(tmp_path / "ws", stdio_server_toml() + broken))
    done = run("--workspace", str(ws), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {r["name"]: r for r in report["tools"]}
    assert rows["Read"] == {
        "name": "Read",
        "category": "info",
        "always_ask": False,
        "source": "builtin",
    }
    assert rows["Spawn"]["category"] == "exec"
    assert rows["mcp__notes__add"]["category"] == "mcp"
    assert rows["mcp__notes__add"]["source"].startswith("mcp:notes (")
    assert rows["notes_append"]["always_ask"] is True
    assert rows["notes_append"]["source"].endswith("notes-append/TOOL.md (driver notes-sdk)")
    assert rows["text_count"]["category"] == "info"
    assert report["mcp_servers"]["notes"]["connected"] is True
    assert report["mcp_servers"]["ghost"]["connected"] is False
    assert len(report["problems"]) == 1 and "ghost" in report["problems"][0]


def test_list_tools_text_and_bad_config(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    done = run("--workspace", str(ws))
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Glob",
        "Grep",
        "Spawn",
    ]
    (ws / "flightdeck.toml").write_text("[agent]\nmode = 'reckless'\n")
    bad = run("--workspace", str(ws))
    assert bad.returncode == 1 and "mode must be one of" in bad.stderr
