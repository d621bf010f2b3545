"""An untrusted workspace's own flightdeck.toml cannot decide where a launch
sends the user's LLM key or its plan, which files audit records go to, or
which folders' code is imported: `launch` refuses it (`workspace.untrusted`)
until the user trusts the workspace, or the flag names the value. Everything
else in the file is taken as written (docs/launch.md, "Configuration")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli_resume import _env, _fd, _workspace

CASES = {
    "llm": '[llm]\nbase_url = "http://127.0.0.1:9/v1"\n',
    "audit": '[audit.sinks]\n"audit/x" = "jsonl:/tmp/planted.jsonl"\n',
    "libraries": '[launch]\ndriver_libraries = ["/tmp/planted"]\n',
    "temporal": '[temporal]\nexecutor = "temporal"\naddress = "127.0.0.1:9"\n',
}


def _launch(ws: Path, plan: Path, *extra: str) -> tuple[int, dict[str, object]]:
    done = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--approve", "all",
        "--format", "json", *extra, env=_env(ws),
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_untrusted_workspace_cannot_route_a_launch(tmp_path: Path, case: str) -> None:
    ws, plan = _workspace(tmp_path)
    (ws / "flightdeck.toml").write_text(CASES[case])
    code, out = _launch(ws, plan)
    assert code == 1, out
    error = out["error"]
    assert isinstance(error, dict) and error["code"] == "workspace.untrusted"
    assert "flightdeck config trust" in str(error["hint"])
    assert not (ws / "ledger.txt").exists()  # nothing ran


@pytest.mark.parametrize("case", ["llm", "audit", "libraries"])
def test_a_trusted_workspace_is_read_as_written(tmp_path: Path, case: str) -> None:
    ws, plan = _workspace(tmp_path)
    (ws / "flightdeck.toml").write_text(CASES[case])
    assert _fd("config", "trust", str(ws), env=_env(ws)).returncode == 0
    code, out = _launch(ws, plan)
    assert code == 0, out
    assert (ws / "ledger.txt").read_text() == "entry\n"


def test_a_flag_names_what_the_workspace_would_have(tmp_path: Path) -> None:
    """`--llm-base-url` and `--temporal` come from the user: the workspace's
    values for them are never read, so nothing is refused."""
    ws, plan = _workspace(tmp_path)
    (ws / "flightdeck.toml").write_text(CASES["llm"])
    code, out = _launch(ws, plan, "--llm-base-url", "http://127.0.0.1:9/v1")
    assert code == 0, out


def test_an_address_a_local_launch_does_not_use_is_not_refused(tmp_path: Path) -> None:
    ws, plan = _workspace(tmp_path)
    (ws / "flightdeck.toml").write_text(
        '[temporal]\naddress = "127.0.0.1:9"\n[launch]\nmax_tries = 2\n'
    )
    code, out = _launch(ws, plan)
    assert code == 0, out


def test_a_cluster_flag_is_not_refused_for_the_workspace_s_address(tmp_path: Path) -> None:
    """`--temporal` names the cluster: the workspace's address is not read,
    so the launch goes on to that cluster (nothing listens there: it is
    `temporal.unavailable`, not `workspace.untrusted`)."""
    ws, plan = _workspace(tmp_path)
    (ws / "flightdeck.toml").write_text(CASES["temporal"])
    code, out = _launch(ws, plan, "--temporal", "127.0.0.1:9")
    assert code == 1, out
    error = out["error"]
    assert isinstance(error, dict) and error["code"] == "temporal.unavailable", error
