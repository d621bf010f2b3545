"""`flightdeck lock` owns flightdeck.lock; `validate` never writes a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli._run import run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workspace"
ENV = {"FLIGHTDECK_LIBRARY_PATH": ""}


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLE, ws)
    (ws / "flightdeck.toml").write_text("")
    return ws


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_validate_in_a_workspace_with_flightdeck_toml_writes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = _files(ws)
    out = run("validate", ".", cwd=ws, env=ENV)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _files(ws) == before


def test_lock_create_check_drift_and_update(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    created = run("lock", "create", cwd=ws, env=ENV)
    assert created.returncode == 0, created.stdout + created.stderr
    lock = json.loads((ws / "flightdeck.lock").read_text())
    (entry,) = lock["actions"].values()
    assert entry["source"] == ".actions/notes-append/ACTION.md"  # workspace-relative
    assert entry["id"] == "notes:append"

    assert run("lock", "check", "--workspace", str(ws), env=ENV).returncode == 0
    again = run("lock", "create", cwd=ws, env=ENV)
    assert again.returncode == 1 and "lock.exists" in again.stderr

    action = ws / ".actions" / "notes-append" / "ACTION.md"
    action.write_text(action.read_text().replace("Append", "Add", 1))
    locked = (ws / "flightdeck.lock").read_bytes()
    drift = run("lock", "check", "--format", "json", cwd=ws, env=ENV)
    assert drift.returncode == 1
    assert [d["change"] for d in json.loads(drift.stdout)["drift"]] == ["changed"]
    assert (ws / "flightdeck.lock").read_bytes() == locked  # check writes nothing

    assert run("lock", "update", cwd=ws, env=ENV).returncode == 0
    assert run("lock", "check", cwd=ws, env=ENV).returncode == 0


def test_lock_check_without_a_lock_file_fails(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    out = run("lock", "check", cwd=ws, env=ENV)
    assert out.returncode == 1 and "lock.missing" in out.stderr
    assert not (ws / "flightdeck.lock").exists()


def test_a_stale_entry_is_drift(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert run("lock", "create", cwd=ws, env=ENV).returncode == 0
    shutil.rmtree(ws / ".tools")
    out = run("lock", "check", cwd=ws, env=ENV)
    assert out.returncode == 1 and "no implementor resolves it" in out.stdout


def test_lock_create_refuses_when_a_ref_does_not_resolve(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    shutil.rmtree(ws / ".actions")
    out = run("lock", "create", cwd=ws, env=ENV)
    assert out.returncode == 1
    assert "lock.unresolved" in out.stderr and "action_ref_unresolvable" in out.stdout
    assert not (ws / "flightdeck.lock").exists()


def test_validate_names_the_invalid_actions_file_under_its_implementor(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    action = ws / ".actions" / "notes-append" / "ACTION.md"
    action.write_text(action.read_text().replace("risk_level: 1", "risk_level: 9"))
    out = run("validate", ".tools", cwd=ws, env=ENV)
    assert out.returncode == 1
    assert "action notes:append is invalid" in out.stdout
    assert str(action.resolve()) + ":" in out.stdout, out.stdout
