"""A Flight Plan whose llm-seam step is answered by the real llama.cpp server:
the launch completes, the model's words are the step's output, and the
audit records the call (provider, model, usage)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.local_model.conftest import ROOT, LocalServer, local_env

FD = str(ROOT / ".venv" / "bin" / "flightdeck")
EXAMPLE = ROOT / "examples" / "flightplans"


def fd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_a_plan_with_a_seam_on_the_local_server_launches_and_is_audited(
    llama: LocalServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLE / "metrics-digest", ws)
    (ws / "flightdeck.toml").write_text("[llm]\nmax_tokens = 32\n")  # a short summary
    env = {
        **os.environ,
        **local_env(),
        "FLIGHTDECK_HOME": str(tmp_path / "home"),
        "LOCAL_TRACKER_DB": str(tmp_path / "tracker.sqlite3"),
        "FLIGHTDECK_SECRET_TRACKER": "token",
    }
    launched = fd(
        "launch", str(EXAMPLE / "metrics-digest-llm" / "SKILL.md"), "--unsigned",
        "--workspace", str(ws), "--approve", "file_issue",
        "--llm-provider", "local", "--llm-base-url", llama.v1,
        "--out-dir", str(tmp_path / "out"), "--format", "json",
        env=env,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stderr + launched.stdout
    run_id = json.loads(launched.stdout)["run_id"]
    listed = fd("audit", "list", "--run", run_id, "--kind", "launch.llm_seam", "--format", "json",
                env=env)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)
    assert len(records) == 1, listed.stdout
    fields = records[0]["fields"]  # the record as `audit list --format json` shows it
    assert fields["provider"] == "local" and fields["model"].endswith(".gguf")
    assert 0 < fields["usage"]["output"] <= 32 and fields["replayed"] is False
