"""The trust contract around every action call."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import ActionCall, ActionFailed

from .conftest import Harness, contract, write_plan

WRITE = contract(
    effect="write",
    credential={"kind": "api-key", "placement": "header", "identityLabel": "bot"},
    idempotency={"safeToRetry": False, "idempotencyKey": True},
    hosts=["tracker.example.com"],
    redaction=[{"field": "assignee.email", "rule": "mask"}],
)
CANARY = "CANARY-9f3b2c7d-secret-token"


def _plan(tmp: Path, write: dict[str, Any] = WRITE, read: dict[str, Any] | None = None) -> Path:
    return write_plan(
        tmp,
        actions={"aileron:m.read": read or contract(), "aileron:t.file": write},
        outputs=[
            {
                "name": "issue.json",
                "mimeType": "application/json",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "issue.json"},
            }
        ],
        steps=[
            {
                "id": "read",
                "kind": "action-call",
                "actionRef": "aileron:m.read",
                "outputs": ["data"],
            },
            {
                "id": "file",
                "kind": "action-call",
                "actionRef": "aileron:t.file",
                "args": {"body": "steps.read.data"},
                "outputs": ["issue"],
                "materializesOutput": "issue.json",
            },
        ],
    )


def _handlers(harness: Harness, calls: list[ActionCall]) -> None:
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"data": "hello"}
    harness.handlers["t.file"] = lambda call: (
        calls.append(call)
        or {"id": 1, "assignee": {"email": "someone@example.com"}, "echo": call.credential}
    )
    harness.env["FLIGHTDECK_SECRET_T_BOT"] = CANARY


def test_write_without_approval_pauses_and_resumes(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: non-read effect needs approval; without it the run pauses with
    status pending-approval, resumable later without repeating completed steps."""
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    plan = _plan(tmp_path)
    first = harness.run(plan)
    assert first.status == "pending-approval" and first.pending == ["file"]
    assert [c.step_id for c in calls] == ["read"]
    assert harness.journal.run(first.run_id).status == "pending-approval"  # type: ignore[union-attr]
    second = harness.run(None, resume=first.run_id, approve=["file"])
    assert second.run_id == first.run_id and second.status == "completed"
    assert [c.step_id for c in calls] == ["read", "file"]  # read was memoised
    decision = [r for r in harness.records("launch.action_call") if r["step"] == "file"]
    assert decision[0]["approval-decision"] == "approved:flag"


def test_approvals_file_and_denial(harness: Harness, tmp_path: Path) -> None:
    import asyncio
    import json

    from flightdeck.launch import Approvals, LaunchOptions, launch

    calls: list[ActionCall] = []
    _handlers(harness, calls)
    approvals = tmp_path / "approvals.json"
    approvals.write_text(json.dumps({"file": "deny"}))
    options = LaunchOptions(
        unsigned=True, out_dir=tmp_path / "o", approvals=Approvals.build((), approvals)
    )
    result = asyncio.run(launch(_plan(tmp_path), options, harness.runtime()))
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "approval.denied" and result.error.step == "file"
    assert [c.step_id for c in calls] == ["read"]


def test_prompt_approves_on_a_terminal(harness: Harness, tmp_path: Path) -> None:
    from flightdeck.launch import Approvals

    asked: list[tuple[str, str, str]] = []
    approvals = Approvals(prompt=lambda *a: asked.append(a) or True)
    assert approvals.decide("file", "aileron:t.file", "write") == "approved:prompt"
    assert approvals.decide("read", "aileron:m.read", "read") == "not-required"
    assert asked == [("file", "aileron:t.file", "write")]


def test_idempotency_key_is_stable_across_resume(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: idempotencyKey true passes a stable key derived from run and step,
    so a resumed run reuses it."""
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    harness.handlers["t.file"] = lambda call: (
        calls.append(call) or (_ for _ in ()).throw(ActionFailed("tracker down", transient=True))
    )
    first = harness.run(_plan(tmp_path), approve=["all"])
    assert first.status == "failed"
    harness.handlers["t.file"] = lambda call: calls.append(call) or {"id": 2}
    second = harness.run(None, resume=first.run_id, approve=["all"])
    assert second.status == "completed"
    keys = [c.idempotency_key for c in calls if c.step_id == "file"]
    assert len(keys) == 2 and keys[0] == keys[1] and keys[0]
    assert [c.idempotency_key for c in calls if c.step_id == "read"] == [None]


def test_safe_to_retry_retries_transient_failures_each_audited(
    harness: Harness, tmp_path: Path
) -> None:
    """Issue 6: safeToRetry true retries transient failures with backoff, each try audited."""
    tries: list[int] = []

    def flaky(call: ActionCall) -> Any:
        tries.append(1)
        if len(tries) < 3:
            raise ActionFailed("503", transient=True)
        return {"data": "ok"}

    harness.handlers["m.read"] = flaky
    harness.handlers["t.file"] = lambda call: {"id": 1}
    harness.env["FLIGHTDECK_SECRET_T"] = "x"
    result = harness.run(_plan(tmp_path), approve=["all"])
    assert result.status == "completed" and len(tries) == 3
    attempts = [r for r in harness.records("launch.action_call") if r["step"] == "read"]
    assert [r["attempt"] for r in attempts] == [1, 2, 3]
    assert [r["result"] for r in attempts] == ["error:action.failed"] * 2 + ["ok"]


def test_not_safe_to_retry_never_retries(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: safeToRetry false never retries."""
    tries: list[int] = []
    harness.handlers["m.read"] = lambda call: {"data": 1}

    def once(call: ActionCall) -> Any:
        tries.append(1)
        raise ActionFailed("timeout", transient=True)

    harness.handlers["t.file"] = once
    harness.env["FLIGHTDECK_SECRET_T"] = "x"
    result = harness.run(_plan(tmp_path), approve=["all"])
    assert result.status == "failed" and len(tries) == 1


def test_every_declared_audit_field_is_filled(harness: Harness, tmp_path: Path) -> None:
    """Issue 6 / seed 003 audit: one record per action call with every declared closed field."""
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    full = dict(WRITE, audit=contract()["audit"])
    result = harness.run(_plan(tmp_path, write=full), approve=["all"])
    assert result.status == "completed"
    record = next(r for r in harness.records("launch.action_call") if r["step"] == "file")
    for name in contract()["audit"]["fields"]:
        assert name in record, name
    assert record["credential-binding"] == "secret://t/bot"
    assert record["identity-label"] == "bot"
    assert record["operation-effect"] == "write"
    assert record["approved-input"]["sha256"].startswith("sha256:")
    assert record["result"] == "ok"
    assert record["network-target"] == []
    launch = harness.records("launch.run")[0]
    assert launch["unsigned"] is True and launch["content_hash"].startswith("sha256:")
    outputs = harness.records("launch.output")
    assert outputs[0]["name"] == "issue.json" and len(outputs[0]["sha256"]) == 64


def test_only_declared_audit_fields_are_emitted(harness: Harness, tmp_path: Path) -> None:
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    narrow = dict(WRITE, audit={"fields": ["result"]})
    harness.run(_plan(tmp_path, write=narrow), approve=["all"])
    record = next(r for r in harness.records("launch.action_call") if r["step"] == "file")
    assert "result" in record and "approved-input" not in record


def test_redaction_applies_before_graph_and_audit(harness: Harness, tmp_path: Path) -> None:
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    result = harness.run(_plan(tmp_path), approve=["all"])
    text = (tmp_path / "out" / "issue.json").read_text()
    assert "someone@" not in text and "****" in text
    assert result.status == "completed"
    assert "someone@" not in str(harness.records())


def test_credential_canary_never_leaks(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: credentials never written to logs, audit, outputs or errors (canary)."""
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    result = harness.run(_plan(tmp_path), approve=["all"])
    assert result.status == "completed"
    assert calls[-1].credential == CANARY  # handed to the action
    harness.journal.close()
    for blob in [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]:
        assert CANARY.encode() not in blob
    assert CANARY not in str(harness.records())
    # ... and not in an error either
    harness.handlers["t.file"] = lambda call: (_ for _ in ()).throw(
        RuntimeError(f"auth failed for {call.credential}")
    )
    failed = harness.run(_plan(tmp_path), approve=["all"])
    assert failed.status == "failed" and CANARY not in str(failed.to_dict())
    assert "[REDACTED]" in failed.error.message  # type: ignore[union-attr]
    assert CANARY not in str(harness.records())


def test_missing_credential_names_where_to_put_it(harness: Harness, tmp_path: Path) -> None:
    harness.handlers["m.read"] = lambda call: {"data": 1}
    harness.handlers["t.file"] = lambda call: {"id": 1}
    result = harness.run(_plan(tmp_path), approve=["all"])
    assert result.error is not None and result.error.code == "credential.missing"
    assert "FLIGHTDECK_SECRET_T_BOT" in (result.error.hint or "")


def test_secrets_file_must_be_0600(harness: Harness, tmp_path: Path) -> None:
    from flightdeck.launch import LaunchError, SecretStore

    path = tmp_path / "secrets.toml"
    path.write_text('[secrets]\n"t/bot" = "from-file"\n')
    path.chmod(0o600)
    assert SecretStore(env={}, path=path).lookup("t", "api-key", "bot").value == "from-file"
    path.chmod(0o644)
    with pytest.raises(LaunchError) as caught:
        SecretStore(env={}, path=path).lookup("t", "api-key", "bot")
    assert caught.value.code == "credential.file_permissions"


def test_egress_outside_contract_hosts_is_denied(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: an in-process call may reach only the contract's hosts; elsewhere the
    step fails with egress_denied naming the host."""

    def sneaky(call: ActionCall) -> Any:
        with contextlib.suppress(OSError):  # the action swallows the refusal...
            socket.getaddrinfo("exfil.example.net", 443)
        return {"data": 1}

    harness.handlers["m.read"] = sneaky
    result = harness.run(_plan(tmp_path))
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "egress_denied" and "exfil.example.net" in result.error.message
    assert result.error.step == "read"


def test_egress_to_contract_host_allowed_and_recorded(harness: Harness, tmp_path: Path) -> None:
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()

    def reach(call: ActionCall) -> Any:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return {"data": "reached"}

    harness.handlers["m.read"] = reach
    harness.handlers["t.file"] = lambda call: {"id": 1}
    harness.env["FLIGHTDECK_SECRET_T"] = "x"
    result = harness.run(_plan(tmp_path, read=contract(hosts=["127.0.0.1"])), approve=["all"])
    server.close()
    assert result.status == "completed"
    record = next(r for r in harness.records("launch.action_call") if r["step"] == "read")
    assert record["network-target"] == ["127.0.0.1"]


def test_egress_hook_inactive_outside_a_guard() -> None:
    from flightdeck.guard import install, layers

    install()
    assert layers() == ()
    # ConnectionRefusedError, not OSError: the guard's own refusal is a PermissionError
    # (an OSError too), so only the narrower type proves the hook stayed out of the way.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", 1), timeout=1)


def test_undeclared_action_ref_refused(harness: Harness, tmp_path: Path) -> None:
    """Seed 003: the runtime refuses an action-call step whose ref is not declared."""
    from flightdeck.launch import LaunchError

    plan = write_plan(
        tmp_path, steps=[{"id": "x", "kind": "action-call", "actionRef": "aileron:no.such"}]
    )
    with pytest.raises(LaunchError) as caught:
        harness.run(plan)
    assert caught.value.code == "launch.invalid_plan"


def test_journal_rows_are_written(harness: Harness, tmp_path: Path) -> None:
    calls: list[ActionCall] = []
    _handlers(harness, calls)
    result = harness.run(_plan(tmp_path), approve=["all"])
    db = sqlite3.connect(harness.journal.path)
    rows = db.execute("SELECT step_id, status FROM steps WHERE run_id = ?", (result.run_id,))
    assert dict(rows.fetchall()) == {"read": "completed", "file": "completed"}
