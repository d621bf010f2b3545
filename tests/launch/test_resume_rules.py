"""Which interrupted steps a resume runs again, in process and fast: a run
is completed, then its journal is put back to what a kill -9 mid-call
leaves (run `running`, steps `started`), and resumed. Each test was written
against a mutant of launch/engine/_resume.py that survived the mutation pass."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import ActionCall, LaunchError, ResumeDecisions

from .conftest import Harness, contract, write_plan

CONTRACTS = {
    "raw": contract(effect="write", idempotency={"safeToRetry": False, "idempotencyKey": False}),
    "keyed": contract(effect="write", idempotency={"safeToRetry": False, "idempotencyKey": True}),
    "safe": contract(effect="write", idempotency={"safeToRetry": True, "idempotencyKey": False}),
    "done": contract(effect="write", idempotency={"safeToRetry": False, "idempotencyKey": False}),
}


def _interrupted(harness: Harness, tmp_path: Path, *in_flight: str) -> tuple[str, Counter[str]]:
    """A completed run whose `in_flight` steps now look killed mid-call."""
    calls: Counter[str] = Counter()

    def handler(call: ActionCall) -> dict[str, Any]:
        calls[call.step_id] += 1
        return {"n": calls[call.step_id]}

    for name in CONTRACTS:
        harness.handlers[f"m.{name}"] = handler
    plan = write_plan(
        tmp_path,
        actions={f"aileron:m.{name}": c for name, c in CONTRACTS.items()},
        steps=[
            {"id": name, "kind": "action-call", "actionRef": f"aileron:m.{name}", "outputs": ["r"]}
            for name in CONTRACTS
        ],
    )
    first = harness.run(plan, approve=["all"])
    assert first.status == "completed", first.error
    harness.journal.set_run_status(first.run_id, "running")
    for step in in_flight:
        harness.journal.step_started(first.run_id, step, "action-call", None)
    return first.run_id, calls


def _resume(harness: Harness, run_id: str, **decisions: Any) -> Any:
    return harness.run(None, resume=run_id, approve=["all"], decisions=ResumeDecisions(**decisions))


def test_only_the_unkeyed_unretryable_write_is_held(harness: Harness, tmp_path: Path) -> None:
    run_id, calls = _interrupted(harness, tmp_path, "raw", "keyed", "safe")
    result = _resume(harness, run_id)
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "resume.in_doubt"
    assert result.error.step == "raw"
    # keyed (the connector de-duplicates) and safe run again; the completed
    # step and the in-doubt write do not.
    assert calls == Counter(raw=1, keyed=2, safe=2, done=1)
    again = _resume(harness, run_id)  # still held on the next resume
    assert again.error is not None and again.error.code == "resume.in_doubt"
    assert calls["raw"] == 1


def test_accept_completes_without_running_and_is_audited(harness: Harness, tmp_path: Path) -> None:
    run_id, calls = _interrupted(harness, tmp_path, "raw")
    assert _resume(harness, run_id).status == "failed"
    result = _resume(harness, run_id, accept={"raw": {"r": {"n": 1}}})
    assert result.status == "completed" and calls["raw"] == 1
    decided = harness.records("resume.decision")
    assert len(decided) == 1 and decided[0]["decision"] == "accept" and decided[0]["by"]


def test_retry_runs_the_write_once_more(harness: Harness, tmp_path: Path) -> None:
    run_id, calls = _interrupted(harness, tmp_path, "raw")
    result = _resume(harness, run_id, retry=frozenset({"raw"}))
    assert result.status == "completed" and calls["raw"] == 2
    assert [r["decision"] for r in harness.records("resume.decision")] == ["retry"]


@pytest.mark.parametrize("step", ["done", "keyed"])
def test_a_decision_for_a_step_not_in_doubt_is_refused(
    harness: Harness, tmp_path: Path, step: str
) -> None:
    run_id, calls = _interrupted(harness, tmp_path, "raw", "keyed")
    with pytest.raises(LaunchError) as caught:
        _resume(harness, run_id, retry=frozenset({step}))
    assert caught.value.code == "resume.not_in_doubt"
    assert calls["raw"] == 1


@pytest.mark.parametrize(
    "decisions",
    [{"accept": {"raw": {}}}, {"retry": frozenset({"raw"})}],
    ids=["accept", "retry"],
)
def test_decisions_without_resume_are_refused(
    harness: Harness, tmp_path: Path, decisions: dict[str, Any]
) -> None:
    plan = write_plan(tmp_path, steps=[{"id": "t", "kind": "transform", "outputs": ["x"]}])
    with pytest.raises(LaunchError) as caught:
        harness.run(plan, decisions=ResumeDecisions(**decisions))
    assert caught.value.code == "resume.not_in_doubt"


def test_a_write_that_failed_cleanly_is_run_again(harness: Harness, tmp_path: Path) -> None:
    # Only an interruption makes a write in doubt; a call that answered with
    # an error did not take effect, so a resume runs it again.
    run_id, calls = _interrupted(harness, tmp_path)
    harness.journal.step_finished(
        run_id, "raw", "action-call", "failed", error={"code": "action.failed"}
    )
    result = _resume(harness, run_id)
    assert result.status == "completed" and calls["raw"] == 2
