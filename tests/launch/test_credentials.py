"""The contract's credential handed to the call, verification probes, and the
retry bound (issue 6 follow-up: seed 003's credential and verification rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import ActionCall, ActionFailed, LaunchError, StepSettings
from flightdeck.launch import configured_settings as settings_from

from .conftest import Harness, contract, write_plan

API_KEY = {"kind": "api-key", "placement": "query", "identityLabel": "reporting"}
CANARY = "CANARY-51c0ffee-credential"


def _plan(tmp: Path, tc: dict[str, Any]) -> Path:
    return write_plan(
        tmp,
        actions={"aileron:m.read": tc},
        steps=[
            {
                "id": "read",
                "kind": "action-call",
                "actionRef": "aileron:m.read",
                "outputs": ["data"],
            }
        ],
    )


def test_seed003_credential_kind_and_placement_handed_to_the_call(
    harness: Harness, tmp_path: Path
) -> None:
    """Seed 003 credential block: the bound credential reaches the call with its declared
    kind and placement (value-free context), from the secret store by identityLabel."""
    calls: list[ActionCall] = []
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"data": 1}
    harness.env["FLIGHTDECK_SECRET_M_REPORTING"] = CANARY
    result = harness.run(_plan(tmp_path, contract(credential=API_KEY)))
    assert result.status == "completed", result.error
    call = calls[0]
    assert call.credential == CANARY
    assert call.credential_context() == {
        "kind": "api-key",
        "placement": "query",
        "identityLabel": "reporting",
        "reference": "secret://m/reporting",
        "secret": "FLIGHTDECK_CREDENTIAL",
    }
    assert CANARY not in str(call.credential_context()) and CANARY not in repr(call)
    assert CANARY not in str(harness.records())


def test_seed003_kind_none_binds_nothing(harness: Harness, tmp_path: Path) -> None:
    """Seed 003: "A none credential has no wire placement": nothing is bound even when
    the secret store holds a value for the connector."""
    calls: list[ActionCall] = []
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"data": 1}
    harness.env["FLIGHTDECK_SECRET_M"] = CANARY
    result = harness.run(_plan(tmp_path, contract()))
    assert result.status == "completed"
    assert calls[0].credential is None
    assert calls[0].credential_context()["kind"] == "none"
    assert calls[0].credential_context()["secret"] is None
    assert harness.records("launch.action_call")[0]["credential-binding"] == "none"


def test_missing_credential_fails_before_the_call(harness: Harness, tmp_path: Path) -> None:
    """credential.missing: the step fails before any call, naming the identity label and
    every place the store looked, with no value in it."""
    calls: list[ActionCall] = []
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"data": 1}
    harness.env["FLIGHTDECK_SECRET_OTHER"] = CANARY
    result = harness.run(_plan(tmp_path, contract(credential=API_KEY)))
    assert calls == []
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "credential.missing" and result.error.step == "read"
    message = result.error.message
    assert "'reporting'" in message
    assert "$FLIGHTDECK_SECRET_M_REPORTING" in message and "$FLIGHTDECK_SECRET_M" in message
    assert "'m/reporting'" in message and "secrets.toml" in message
    assert CANARY not in str(result.to_dict())


# ---- verification probes -------------------------------------------------

PROBED = contract(credential=API_KEY, verification={"method": "GET", "path": "/v1/me"})


def _probe_harness(harness: Harness, probe: Any) -> list[ActionCall]:
    calls: list[ActionCall] = []
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"data": 1}
    if probe is not None:
        harness.handlers["m.read.verify"] = lambda call: calls.append(call) or probe(call)
    harness.env["FLIGHTDECK_SECRET_M_REPORTING"] = CANARY
    return calls


def test_seed003_verification_probe_runs_before_any_step(harness: Harness, tmp_path: Path) -> None:
    """Seed 003 verification: "A read-only probe the runtime can call to confirm the
    credential still works": with verify_credentials the probe runs first, through the
    action's implementation, with the probe and the bound credential; it is audited."""
    calls = _probe_harness(harness, lambda call: {"ok": True})
    result = harness.run(_plan(tmp_path, PROBED), verify_credentials=True)
    assert result.status == "completed", result.error
    assert [c.action for c in calls] == ["read.verify", "read"]
    assert dict(calls[0].args) == {"method": "GET", "path": "/v1/me"}
    assert calls[0].credential == CANARY
    assert calls[0].credential_context()["placement"] == "query"
    (record,) = harness.records("launch.credential_probe")
    assert record["action"] == "aileron:m.read" and record["result"] == "ok"
    assert record["credential-binding"] == "secret://m/reporting"
    assert record["probe"] == {"method": "GET", "path": "/v1/me"}
    assert result.probes[0]["status"] == "ok"


def test_verification_is_off_by_default(harness: Harness, tmp_path: Path) -> None:
    calls = _probe_harness(harness, lambda call: {"ok": True})
    assert harness.run(_plan(tmp_path, PROBED)).status == "completed"
    assert [c.action for c in calls] == ["read"]
    assert harness.records("launch.credential_probe") == []


@pytest.mark.parametrize(
    "probe",
    [
        lambda call: (_ for _ in ()).throw(RuntimeError(f"401 for {call.credential}")),
        lambda call: {"ok": False},
        lambda call: False,
    ],
    ids=["raises", "ok-false", "false"],
)
def test_failed_probe_fails_the_launch_naming_the_action(
    harness: Harness, tmp_path: Path, probe: Any
) -> None:
    """credential.verification_failed names the action; no step (nor the run) starts."""
    calls = _probe_harness(harness, probe)
    with pytest.raises(LaunchError) as caught:
        harness.run(_plan(tmp_path, PROBED), verify_credentials=True)
    assert caught.value.code == "credential.verification_failed"
    assert "aileron:m.read" in caught.value.message
    assert CANARY not in str(caught.value.to_dict())
    assert [c.action for c in calls] == ["read.verify"]
    (record,) = harness.records("launch.credential_probe")
    assert record["result"].startswith("error:")
    assert CANARY not in str(harness.records())
    assert harness.journal.runs() == []


def test_probe_without_credential_fails_as_verification(harness: Harness, tmp_path: Path) -> None:
    calls = _probe_harness(harness, lambda call: {"ok": True})
    harness.env.clear()
    with pytest.raises(LaunchError) as caught:
        harness.run(_plan(tmp_path, PROBED), verify_credentials=True)
    assert caught.value.code == "credential.verification_failed"
    assert "credential.missing" in caught.value.message
    assert calls == []


def test_probe_nobody_can_run_is_a_warning_not_a_failure(harness: Harness, tmp_path: Path) -> None:
    """A declared probe with no implementation: audited as unrunnable, the run goes on."""
    events: list[Any] = []
    calls = _probe_harness(harness, None)
    result = harness.run(_plan(tmp_path, PROBED), verify_credentials=True, on_event=events.append)
    assert result.status == "completed"
    assert [c.action for c in calls] == ["read"]
    (record,) = harness.records("launch.credential_probe")
    assert record["result"] == "unrunnable" and record["tool"] is None
    (probe,) = [e for e in events if e.kind == "credential_probe"]
    assert probe.status == "unrunnable" and "read.verify" in probe.detail["message"]


def test_connector_wide_verification_tool(harness: Harness, tmp_path: Path) -> None:
    """A connector may implement one `verification` tool instead of `<action>.verify`."""
    calls = _probe_harness(harness, None)
    harness.handlers["m.verification"] = lambda call: calls.append(call) or {"ok": True}
    result = harness.run(_plan(tmp_path, PROBED), verify_credentials=True)
    assert result.status == "completed"
    assert [c.action for c in calls] == ["verification", "read"]


def test_probe_egress_is_held_to_the_contract_hosts(harness: Harness, tmp_path: Path) -> None:
    import socket

    def probe(call: ActionCall) -> Any:
        socket.getaddrinfo("elsewhere.invalid", 443)
        return {"ok": True}

    _probe_harness(harness, probe)
    with pytest.raises(LaunchError) as caught:
        harness.run(_plan(tmp_path, PROBED), verify_credentials=True)
    assert "egress_denied" in caught.value.message
    assert "elsewhere.invalid" in caught.value.message


# ---- the retry bound -------------------------------------------------------


def test_each_try_is_audited_as_it_ends(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: every try audited, and written when that try ends (not when the step
    finishes): while try 2 runs, try 1's record is already in the sink."""
    seen: list[list[int]] = []

    def flaky(call: ActionCall) -> Any:
        seen.append([r["attempt"] for r in harness.records("launch.action_call")])
        if len(seen) < 3:
            raise ActionFailed("503", transient=True)
        return {"data": "ok"}

    harness.handlers["m.read"] = flaky
    result = harness.run(_plan(tmp_path, contract()))
    assert result.status == "completed"
    assert seen == [[], [1], [1, 2]]
    assert [r["attempt"] for r in harness.records("launch.action_call")] == [1, 2, 3]


def test_max_tries_setting_bounds_the_retries(harness: Harness, tmp_path: Path) -> None:
    tries: list[int] = []

    def always(call: ActionCall) -> Any:
        tries.append(1)
        raise ActionFailed("503", transient=True)

    harness.handlers["m.read"] = always
    settings = StepSettings(retry_attempts=5, retry_base_delay=0.0)
    result = harness.run(_plan(tmp_path, contract()), settings=settings)
    assert result.status == "failed" and len(tries) == 5


def _toml(ws: Path, body: str) -> Path:
    ws.mkdir(exist_ok=True)
    (ws / "flightdeck.toml").write_text(body, "utf-8")
    return ws


def test_retry_bound_read_from_flightdeck_toml(tmp_path: Path) -> None:
    ws = _toml(tmp_path / "ws", "[launch]\nmax_tries = 5\nbackoff_seconds = 0\n")
    settings = settings_from(ws)
    assert settings.retry_attempts == 5 and settings.retry_base_delay == 0.0
    default = settings_from(_toml(tmp_path / "plain", ""))
    assert (default.retry_attempts, default.retry_base_delay) == (3, 0.2)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("max_tries = 0", "max_tries"),
        ("max_tries = -2", "max_tries"),
        ("max_tries = 1.5", "max_tries"),
        ('max_tries = "3"', "max_tries"),
        ("max_tries = true", "max_tries"),
        ("max_tries = 1000", "max_tries"),
        ("backoff_seconds = -0.1", "backoff_seconds"),
        ('backoff_seconds = "fast"', "backoff_seconds"),
        ("backoff_seconds = nan", "backoff_seconds"),
        ("backoff_seconds = inf", "backoff_seconds"),
        ("backoff_seconds = false", "backoff_seconds"),
    ],
)
def test_bad_retry_settings_are_config_invalid_naming_the_key(
    tmp_path: Path, line: str, key: str
) -> None:
    ws = _toml(tmp_path / "ws", f"[launch]\n{line}\n")
    with pytest.raises(LaunchError) as caught:
        settings_from(ws)
    assert caught.value.code == "config.invalid"
    assert f"[launch] {key}" in caught.value.message
    assert str(ws / "flightdeck.toml") in caught.value.message
