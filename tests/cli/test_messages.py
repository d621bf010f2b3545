"""Messages that tell a user what to do: an unknown tool for `call`, and a
freeze for a publisher whose keyring does not trust the signing key."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli._run import run

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ROOT / "examples" / "drivers"
PLAN = ROOT / "examples" / "flightplans" / "metrics-digest" / "SKILL.md"


@pytest.fixture(scope="module")
def drivers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example drivers without the OpenAI ones (their SDK import is slow)."""
    copy = tmp_path_factory.mktemp("drivers") / "ws"
    shutil.copytree(DRIVERS, copy)
    for name in ("openai-sdk", "openai-stream-sdk"):
        shutil.rmtree(copy / ".drivers" / name)
    return copy


def test_call_unknown_tool_says_so_and_lists_known_tools(drivers: Path) -> None:
    done = run("call", "text.stat", "--workspace", str(drivers))
    assert done.returncode == 1
    assert "call.unknown_tool" in done.stderr and "no tool text.stat" in done.stderr
    assert "no candidate qualifies" not in done.stderr
    assert "known tools: " in done.stderr and "text.stats" in done.stderr
    data = json.loads(run("call", "nosuch", "--workspace", str(drivers), "--format", "json").stdout)
    assert data["ok"] is False and data["error"]["code"] == "call.unknown_tool"
    assert "text.word-stream" in data["error"]["details"]["known_tools"]


def test_call_known_tool_no_qualifying_driver_is_still_no_driver(drivers: Path) -> None:
    # The tool exists; a policy tag no driver carries is a different problem.
    done = run("call", "text.stats", "--workspace", str(drivers), "--require-tag", "nope")
    assert done.returncode == 1 and "no_driver" in done.stderr
    assert "call.unknown_tool" not in done.stderr


def test_call_unknown_tool_in_a_workspace_without_drivers(tmp_path: Path) -> None:
    done = run("call", "text.stats", "--workspace", str(tmp_path))
    assert done.returncode == 1 and "call.unknown_tool" in done.stderr
    assert "has no drivers" in done.stderr


def _freeze(home: Path, version: str) -> subprocess.CompletedProcess[str]:
    key = home / "k" / "flightdeck.key"
    return run(
        "freeze",
        str(PLAN),
        "--signing-key",
        str(key),
        "--publisher",
        "github://acme",
        "--version",
        version,
    )


def test_freeze_warns_when_the_key_is_not_trusted_for_the_publisher(fd_home: Path) -> None:
    run("keys", "generate", "--out", str(fd_home / "k"))
    done = _freeze(fd_home, "1.0.0")
    assert done.returncode == 0, done.stderr  # stored all the same
    assert "warning:" in done.stderr and "freeze.publisher_untrusted" in done.stderr
    hint = next(line for line in done.stderr.splitlines() if line.startswith("hint: "))
    command = hint.split("flightdeck ", 1)[1].split()
    assert command[:3] == ["keyring", "trust", "github://acme"]
    # The hint is a command that works, and after it verify passes and freeze is quiet.
    assert run(*command).returncode == 0
    assert run("verify", "metrics-digest@1.0.0").returncode == 0
    again = _freeze(fd_home, "1.0.1")
    assert again.returncode == 0 and "warning" not in again.stderr


def test_freeze_json_carries_the_warning(fd_home: Path) -> None:
    run("keys", "generate", "--out", str(fd_home / "k"))
    done = _freeze(fd_home, "2.0.0")
    frozen = json.loads(
        run(
            "freeze",
            str(PLAN),
            "--signing-key",
            str(fd_home / "k" / "flightdeck.key"),
            "--publisher",
            "github://acme",
            "--version",
            "2.0.0",
            "--format",
            "json",
        ).stdout
    )
    assert done.returncode == 0
    assert [w["code"] for w in frozen["warnings"]] == ["freeze.publisher_untrusted"]


def test_graph_json_of_an_invalid_plan_is_a_json_error() -> None:
    tool = ROOT / "examples" / "workspace" / ".tools" / "notes-append" / "TOOL.md"
    done = run("graph", str(tool), "--format", "json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "graph.invalid_plan" and error["diagnostics"]
