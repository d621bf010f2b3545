"""Issue 32: where freeze finds the catalog file, and who may name it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flightdeck.config import set_trust
from flightdeck.flightplan import FlightPlanError
from flightdeck.launch import FeatureComposer, LaunchError, catalog_composer

DIGEST = "sha256:" + "a" * 64
CATALOG = {
    "catalogVersion": 1,
    "runnerBase": "127.0.0.1:5000/runner@" + DIGEST,
    "tools": {"hello": {"versions": {"1.0.0": {"feature": "127.0.0.1:5000/f@" + DIGEST}}}},
}


def _workspace(tmp_path: Path, toml: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "flightdeck.toml").write_text(toml)
    (ws / "tools.json").write_text(json.dumps(CATALOG))
    return ws


def test_no_catalog_keeps_host_tools(tmp_path: Path) -> None:
    assert catalog_composer(_workspace(tmp_path, ""), None) == (None, None)


def test_an_untrusted_workspace_cannot_name_the_catalog(tmp_path: Path) -> None:
    """Its Features' install.sh would run at the user's freeze."""
    ws = _workspace(tmp_path, '[catalog]\nfile = "tools.json"\n')
    with pytest.raises(LaunchError) as caught:
        catalog_composer(ws, None)
    assert caught.value.code == "workspace.untrusted"
    assert "[catalog] file" in caught.value.message
    set_trust(ws)
    catalog, composer = catalog_composer(ws, None)
    assert catalog is not None and "hello" in catalog.tools
    assert isinstance(composer, FeatureComposer)


def test_a_catalog_named_on_the_command_line_needs_no_trust(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "")
    catalog, _ = catalog_composer(ws, ws / "tools.json")
    assert catalog is not None and catalog.runner_base == CATALOG["runnerBase"]
    with pytest.raises(FlightPlanError) as caught:
        catalog_composer(ws, ws / "missing.json")
    assert caught.value.code == "catalog.unreadable"


def test_a_bad_catalog_setting_is_refused(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "[catalog]\nfile = 3\n")
    set_trust(ws)
    with pytest.raises(LaunchError) as caught:
        catalog_composer(ws, None)
    assert caught.value.code == "config.invalid"


def test_lint_with_a_workspace_reads_its_catalog(tmp_path: Path) -> None:
    from tests.cli._run import run

    ws = _workspace(tmp_path, '[catalog]\nfile = "tools.json"\n')
    plan = ws / "SKILL.md"
    step = {"id": "s", "kind": "tool", "command": ["hello"], "outputs": ["files"]}
    block = {
        "schemaVersion": "aileron.flightplan.v1",
        "environment": {"tools": ["hello@1", "hello@9"]},
        "inputs": [],
        "outputs": [],
        "steps": [step],
    }
    plan.write_text(f"---\nname: p\ndescription: d\naileron: {json.dumps(block)}\n---\n# P\n")
    shipped = run("lint", str(plan), "--format", "json")
    codes = {d["code"] for d in json.loads(shipped.stdout)["files"][0]["diagnostics"]}
    assert "flightplan.unknown_tool" in codes  # not in the shipped catalog
    done = run("lint", str(plan), "--workspace", str(ws), "--format", "json")
    found = json.loads(done.stdout)["files"][0]["diagnostics"]
    assert done.returncode == 1
    assert [(d["code"], d["pointer"]) for d in found if d["severity"] == "error"] == [
        ("flightplan.unknown_tool_version", "/aileron/environment/tools/1")
    ]


def _validated(*args: str) -> tuple[int, list[tuple[str, str | None, str]]]:
    from tests.cli._run import run

    done = run("validate", *args, "--format", "json")
    report = json.loads(done.stdout)
    found = [
        (d["code"], d.get("pointer"), d["severity"])
        for f in report["files"]
        for d in f["diagnostics"]
        if d["code"].startswith(("flightplan.unknown_tool", "catalog."))
    ]
    return done.returncode, found


def test_validate_judges_tools_against_the_configured_catalog(tmp_path: Path) -> None:
    """validate uses the catalog freeze would: `--catalog`, else the plan's
    workspace's `[catalog] file` (read without trust: reading runs nothing)."""
    step = {"id": "s", "kind": "tool", "command": ["hello"], "outputs": ["files"]}
    block = {
        "schemaVersion": "aileron.flightplan.v1",
        "environment": {"tools": ["hello@1", "hello@9"]},
        "inputs": [],
        "outputs": [],
        "steps": [step],
    }
    text = f"---\nname: p\ndescription: d\naileron: {json.dumps(block)}\n---\n# P\n"
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "SKILL.md").write_text(text)
    # The shipped catalog: hello is unknown (twice).
    code, found = _validated(str(bare / "SKILL.md"))
    assert {c for c, _, _ in found} == {"flightplan.unknown_tool"}
    expected = [("flightplan.unknown_tool_version", "/aileron/environment/tools/1", "error")]
    ws = _workspace(tmp_path, "")
    code, found = _validated(str(bare / "SKILL.md"), "--catalog", str(ws / "tools.json"))
    assert (code, found) == (1, expected)
    (tmp_path / "configured").mkdir()
    configured = _workspace(tmp_path / "configured", '[catalog]\nfile = "tools.json"\n')
    (configured / "SKILL.md").write_text(text)
    code, found = _validated(str(configured / "SKILL.md"))
    assert (code, found) == (1, expected)
    # A catalog that cannot be read is said, on the catalog file.
    (configured / "tools.json").write_text("{")
    code, found = _validated(str(configured / "SKILL.md"))
    assert code == 1 and ("catalog.invalid", "", "error") in found
