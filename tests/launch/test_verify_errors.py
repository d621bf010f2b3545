"""Verification before anything runs, and the refusals a launch can meet."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from flightdeck.flightplan import Keyring, freeze_plan, generate_keys
from flightdeck.launch import ActionCall, LaunchError

from .conftest import Harness, contract, write_plan


def _frozen(harness: Harness, tmp_path: Path, publisher: str | None = None) -> Path:
    calls: list[ActionCall] = []
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"v": 1}
    source = tmp_path / "src"
    source.mkdir()
    plan = write_plan(
        source,
        name="frozen-plan",
        actions={"aileron:m.read": contract()},
        steps=[{"id": "r", "kind": "action-call", "actionRef": "aileron:m.read"}],
    )
    keys = generate_keys(tmp_path / "keys")
    if publisher:
        Keyring().trust(publisher, keys.public_path.read_bytes())
    outcome = freeze_plan(plan, signing_key=keys.private_path, publisher=publisher, version="1.0.0")
    return outcome.stored.skill_path


def test_frozen_plan_is_verified_then_launched(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: verify before anything runs (hash, signature, publisher trust)."""
    _frozen(harness, tmp_path, publisher="github://acme")
    result = harness.run("frozen-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert result.status == "completed"
    record = harness.records("launch.run")[0]
    assert record["publisher"] == "github://acme" and record["version"] == "1.0.0"
    assert record["signer"].startswith("sha256:") and record["unsigned"] is False


def test_tampered_plan_is_refused_before_anything_runs(harness: Harness, tmp_path: Path) -> None:
    skill = _frozen(harness, tmp_path)
    skill.chmod(0o644)
    skill.write_text(skill.read_text().replace("# Test", "# Tampered"))
    ran: list[str] = []
    harness.handlers["m.read"] = lambda call: ran.append("x") or {}
    with pytest.raises(LaunchError) as caught:
        harness.run(skill, unsigned=False)
    assert caught.value.code == "verify.body_tampered"
    assert ran == [] and harness.audit.records() == []


def test_untrusted_publisher_is_refused(harness: Harness, tmp_path: Path) -> None:
    skill = _frozen(harness, tmp_path, publisher="github://acme")
    Keyring().untrust("github://acme")
    with pytest.raises(LaunchError) as caught:
        harness.run(skill, unsigned=False)
    assert caught.value.code == "verify.publisher_untrusted"


def test_unsigned_needs_a_path(harness: Harness) -> None:
    with pytest.raises(LaunchError) as caught:
        harness.run(Path("nowhere/SKILL.md"))
    assert caught.value.code == "launch.not_found"


def test_resume_refuses_a_changed_plan(harness: Harness, tmp_path: Path) -> None:
    harness.handlers["m.read"] = lambda call: {"v": 1}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.read": contract()},
        steps=[{"id": "r", "kind": "action-call", "actionRef": "aileron:m.read"}],
    )
    first = harness.run(plan)
    plan.write_text(plan.read_text().replace("# Test", "# Changed"))
    with pytest.raises(LaunchError) as caught:
        harness.run(None, resume=first.run_id)
    assert caught.value.code == "resume.plan_changed"
    with pytest.raises(LaunchError) as caught:
        harness.run(plan, replay=first.run_id)
    assert caught.value.code == "replay.plan_mismatch"


def test_bad_approvals_file(tmp_path: Path) -> None:
    from flightdeck.launch import Approvals

    path = tmp_path / "a.json"
    path.write_text(json.dumps({"x": "maybe"}))
    with pytest.raises(LaunchError) as caught:
        Approvals.build((), path)
    assert caught.value.code == "approval.file_invalid"


def test_source_read_with_write_effect_needs_approval(harness: Harness, tmp_path: Path) -> None:
    harness.handlers["m.list"] = lambda call: {"names": ["a"]}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.list": contract(effect="write")},
        inputs=[
            {
                "name": "names",
                "type": "array",
                "resolution": {
                    "rule": "source",
                    "source": {"actionRef": "aileron:m.list", "select": "names"},
                },
            }
        ],
        steps=[
            {"id": "t", "kind": "transform", "bindings": {"n": "inputs.names"}, "outputs": ["o"]}
        ],
    )
    with pytest.raises(LaunchError) as caught:
        harness.run(plan)
    assert caught.value.code == "approval.required" and "inputs.names" in (caught.value.hint or "")
    result = harness.run(plan, approve=["inputs.names"])
    assert result.status == "completed"
    read = harness.records("launch.run")[-1]["source_reads"][0]
    assert read["input"] == "names" and read["select"] == "names"
    assert harness.journal.run(result.run_id).inputs == {"names": ["a"]}  # type: ignore[union-attr]


def test_driver_invoker_unresolved(tmp_path: Path) -> None:
    from flightdeck.launch import DriverInvoker

    invoker = DriverInvoker(tmp_path)
    with pytest.raises(LaunchError) as caught:
        invoker.describe("nobody", "nothing")
    assert caught.value.code == "action.unresolved" and "nobody" in caught.value.message


def test_journal_survives_reopen(harness: Harness, tmp_path: Path) -> None:
    harness.handlers["m.read"] = lambda call: {"v": 1}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.read": contract()},
        steps=[{"id": "r", "kind": "action-call", "actionRef": "aileron:m.read"}],
    )
    result = harness.run(plan)
    harness.journal.close()
    db = sqlite3.connect(harness.journal.path)
    names = [row[0] for row in db.execute("SELECT name FROM _migrations")]
    assert names == [
        "0001_runs",
        "0002_run_executor",
        "0003_output_chunks",
        "0004_applied_rounds",
    ]
    assert (
        db.execute("SELECT status FROM runs WHERE run_id = ?", (result.run_id,)).fetchone()[0]
        == "completed"
    )


def test_driver_invoker_names_unreadable_driver_files(tmp_path: Path) -> None:
    from flightdeck.launch import DriverInvoker

    (tmp_path / ".drivers" / "bad").mkdir(parents=True)
    (tmp_path / ".drivers" / "bad" / "DRIVER.md").write_text("---\nid: [unclosed\n---\n")
    with pytest.raises(LaunchError) as caught:
        DriverInvoker(tmp_path).describe("bad", "x")
    assert caught.value.code == "action.unresolved"
    assert "bad/DRIVER.md" in (caught.value.hint or "")


def test_approve_must_name_a_step(harness: Harness, tmp_path: Path) -> None:
    harness.handlers["m.read"] = lambda call: {"v": 1}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.read": contract()},
        steps=[{"id": "r", "kind": "action-call", "actionRef": "aileron:m.read"}],
    )
    with pytest.raises(LaunchError) as caught:
        harness.run(plan, approve=["file_isue"])
    assert caught.value.code == "approval.unknown_step" and "file_isue" in caught.value.message


def test_dynamic_input_cannot_be_passed(harness: Harness, tmp_path: Path) -> None:
    plan = write_plan(
        tmp_path,
        inputs=[
            {"name": "t", "type": "timestamp", "resolution": {"rule": "dynamic", "value": "now"}}
        ],
        steps=[{"id": "x", "kind": "transform", "bindings": {"t": "inputs.t"}, "outputs": ["o"]}],
    )
    with pytest.raises(LaunchError) as caught:
        harness.run(plan, inputs={"t": "2020-01-01T00:00:00Z"})
    assert caught.value.code == "input.not_literal" and "t" in caught.value.message
