"""Lifecycle events: fired by implementors, launches and approvals; recorded in
the audit; delivered to entry-point subscribers and `[[hooks]]` commands."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from flightdeck.audit import (
    Dispatcher,
    Hook,
    LifecycleEvent,
    MemoryAuditSink,
    fire,
    flush_events,
    hooks_from_config,
)
from tests.cli._run import run
from tests.launch.conftest import Harness
from tests.launch.test_contract import _handlers, _plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "drivers"
# A hook that appends the event it reads on stdin, and the variable it was given.
RECORDER = (
    "import json, os, sys; e = json.load(sys.stdin); e['env'] = os.environ['FLIGHTDECK_EVENT'];"
    " open(sys.argv[1], 'a').write(json.dumps(e) + '\\n')"
)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_dispatcher_delivers_in_order_to_subscribers_and_matching_hooks(tmp_path: Path) -> None:
    out = tmp_path / "hook.jsonl"
    seen: list[dict[str, Any]] = []
    hooks = [
        Hook((sys.executable, "-c", RECORDER, str(out)), frozenset({"commit-completed"})),
        Hook((sys.executable, "-c", "import time; time.sleep(30)"), None, timeout=0.2),
        Hook(("/nonexistent/program",), None),
    ]

    def broken(event: dict[str, Any]) -> None:
        raise RuntimeError("subscriber bug")

    dispatcher = Dispatcher(hooks, [("broken", broken), ("seen", seen.append)])
    for name in ("write", "commit-completed"):
        dispatcher.deliver(LifecycleEvent(name, "test", "run-1", {"n": 1}))
    dispatcher.flush()  # the slow hook was cut at its timeout; nothing raised
    assert [e["event"] for e in seen] == ["write", "commit-completed"]
    [delivered] = _lines(out)
    assert delivered["event"] == delivered["env"] == "commit-completed"
    assert delivered["run_id"] == "run-1" and delivered["fields"] == {"n": 1}


def test_hook_config_entries_are_read_or_skipped() -> None:
    hooks = hooks_from_config(
        [
            {"command": "notify-send 'plan done'", "events": ["run.finished"], "timeout": 3},
            {"command": ["a", "b"], "event": "*"},
            {"command": 5},  # not a command
            {"command": "x", "timeout": -1},  # not a timeout
            {"command": "unbalanced 'quote"},
            "not a table",
        ]
    )
    assert [(h.command, h.events, h.timeout) for h in hooks] == [
        (("notify-send", "plan done"), frozenset({"run.finished"}), 3.0),
        (("a", "b"), None, 10.0),
    ]
    assert hooks_from_config({"command": "x"}) == []  # a table, not an array of tables


def test_fire_records_the_event_in_the_audit() -> None:
    sink = MemoryAuditSink()
    fire("write", source="test", run_id="r", fields={"tool": "t"}, audit=sink)
    flush_events()
    [record] = sink.records(kind="lifecycle.event")
    assert (record.run_id, dict(record.fields)) == (
        "r",
        {"event": "write", "source": "test", "tool": "t"},
    )


def _workspace_with_events(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    shutil.copytree(EXAMPLES, workspace)
    # The events come from the action the tool implements (its merged view).
    action = workspace / ".actions" / "text-count" / "ACTION.md"
    action.parent.mkdir(parents=True)
    action.write_text(
        "---\nschema: action/v1\nid: text:count\nversion: 1.0.0\n"
        "description: Count things in a text.\nmutates: []\nrisk_level: 0\napproval: auto\n"
        "fires_events: [text-counted]\n---\nPure.\n"
    )
    tool = workspace / ".tools" / "text-stats" / "TOOL.md"
    text = tool.read_text()
    tool.write_text(text.replace("version: 1.0.0\n", "version: 1.0.0\nimplements: text:count\n", 1))
    return workspace


def test_flightdeck_call_fires_the_tools_events_to_hooks_and_audit(
    tmp_path: Path, fd_home: Path
) -> None:
    workspace = _workspace_with_events(tmp_path)
    out = tmp_path / "events.jsonl"
    hook = (
        "[[hooks]]\n"
        f"command = {json.dumps([sys.executable, '-c', RECORDER, str(out)])}\n"
        'events = ["text-counted"]\n'
    )
    # A workspace's hooks are never run (a cloned repository must not run
    # commands); the user's config.toml is where hooks live.
    planted = tmp_path / "planted.jsonl"
    (workspace / "flightdeck.toml").write_text(hook.replace(str(out), str(planted)))
    (fd_home / "config").mkdir(parents=True, exist_ok=True)
    (fd_home / "config" / "config.toml").write_text(hook)
    proc = run(
        "call",
        "text.stats",
        "--workspace",
        str(workspace),
        "--input",
        '{"text": "a b"}',
        cwd=workspace,
    )
    assert proc.returncode == 0, proc.stderr
    # The process waited for its hook before exiting.
    assert not planted.exists()
    [event] = _lines(out)
    assert event["event"] == "text-counted" and event["source"] == "driver.call"
    assert event["fields"]["tool"] == "text.stats"
    assert event["fields"]["driver"] == "textstats-local"
    proc = run("audit", "list", "--kind", "lifecycle.event", "--format", "json")
    [record] = json.loads(proc.stdout)
    assert record["fields"]["event"] == "text-counted"


def test_entry_point_subscribers_receive_events(tmp_path: Path, fd_home: Path) -> None:
    workspace = _workspace_with_events(tmp_path)
    site = tmp_path / "site"
    (site / "fdsub-0.1.dist-info").mkdir(parents=True)
    (site / "fdsub-0.1.dist-info" / "METADATA").write_text("Name: fdsub\nVersion: 0.1\n")
    (site / "fdsub-0.1.dist-info" / "entry_points.txt").write_text(
        "[flightdeck.subscribers]\nrecord = fdsub:on_event\n"
    )
    (site / "fdsub.py").write_text(
        textwrap.dedent(
            """
            import json, os

            def on_event(event):
                with open(os.environ["FDSUB_OUT"], "a") as f:
                    f.write(json.dumps(event) + "\\n")
            """
        )
    )
    out = tmp_path / "sub.jsonl"
    proc = run(
        "call",
        "text.stats",
        "--workspace",
        str(workspace),
        "--input",
        '{"text": "a"}',
        env={"PYTHONPATH": os.pathsep.join([str(site), *sys.path[1:]]), "FDSUB_OUT": str(out)},
    )
    assert proc.returncode == 0, proc.stderr
    assert [e["event"] for e in _lines(out)] == ["text-counted"]


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def test_a_launch_fires_approval_waiting_and_run_finished(harness: Harness, tmp_path: Path) -> None:
    _handlers(harness, [])
    plan = _plan(tmp_path)
    result = harness.run(plan)
    assert result.status == "pending-approval"

    def fired() -> list[tuple[str, Any, Any]]:
        records = harness.records("lifecycle.event")
        return [(r["event"], r.get("step"), r.get("status")) for r in records]

    # Paused for the approval: the run has not finished (docs/launch.md).
    assert fired() == [("approval.waiting", "file", None)]
    assert [r["pending_approval"] for r in harness.records("launch.pause")] == [["file"]]
    assert harness.records("launch.finish") == []
    row = harness.journal.run(result.run_id)
    assert row is not None and row.finished_at is None  # paused, not finished
    resumed = harness.run(None, resume=result.run_id, approve=["file"])
    assert resumed.status == "completed"
    # It finished once: one `run.finished`, one `launch.finish`.
    assert fired() == [("approval.waiting", "file", None), ("run.finished", None, "completed")]
    assert [r["status"] for r in harness.records("launch.finish")] == ["completed"]
    row = harness.journal.run(result.run_id)
    assert row is not None and row.finished_at is not None


def test_a_slow_subscriber_cannot_grow_the_queue_without_bound() -> None:
    gate = threading.Event()
    seen: list[str] = []

    def slow(event: dict[str, Any]) -> None:
        gate.wait(10)
        seen.append(event["event"])

    dispatcher = Dispatcher([], [("slow", slow)], max_pending=3)
    for n in range(10):
        dispatcher.deliver(LifecycleEvent(f"e{n}", "test"))
    assert dispatcher.dropped == 7
    gate.set()
    dispatcher.flush()
    assert seen == ["e0", "e1", "e2"]
    dispatcher.deliver(LifecycleEvent("later", "test"))  # room again once delivered
    dispatcher.flush()
    assert seen[-1] == "later"


def test_a_run_resumed_after_it_failed_finishes_again(harness: Harness, tmp_path: Path) -> None:
    """docs/launch.md: `run.finished` once per ending; a failed run that is
    resumed and completes has ended twice."""
    from tests.launch.conftest import contract, write_plan

    calls: list[int] = []

    def flaky(call: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("down")
        return {"v": 1}

    harness.handlers["m.flaky"] = flaky
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.flaky": contract(idempotency={"safeToRetry": False})},
        steps=[{"id": "f", "kind": "action-call", "actionRef": "aileron:m.flaky"}],
    )
    failed = harness.run(plan)
    assert failed.status == "failed"
    assert harness.run(None, resume=failed.run_id).status == "completed"
    finished = [
        r["status"] for r in harness.records("lifecycle.event") if r["event"] == "run.finished"
    ]
    assert finished == ["failed", "completed"]
    assert [r["status"] for r in harness.records("launch.finish")] == ["failed", "completed"]
