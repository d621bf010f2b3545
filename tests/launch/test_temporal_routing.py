"""Issue 28: a Temporal run is resumed, approved and shown where it lives.

The CLI as users type it (processes), against a real dev server and
`flightdeck worker` processes with a test driver: a run records its executor
and cluster in the journal, so `launch --resume RUN` typed without the
Temporal flags goes to the run's cluster (or is refused, never run here),
`runs approve` finds the cluster without `--temporal`, every refusal's hint
is a command that works, and `--format json` says `ok` exactly when the exit
status is 0.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_json_casing import non_snake_keys

from ._temporal_env import dev_server, started_server, wait_for
from ._temporal_env import free_port as _free_port
from .conftest import contract, write_plan

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

server = pytest.fixture(scope="module")(dev_server)
FD = str(Path(sys.executable).parent / "flightdeck")
JSON = ("--format", "json")
WRITE = contract(effect="write", idempotency={"safeToRetry": False, "idempotencyKey": False})

TOOL = """---
name: {name}
id: {name}
description: A test tool.
version: 1.0.0
inputs:
  type: object
  properties: {{ text: {{}} }}
  additionalProperties: false
outputs:
  type: object
---
Test.
"""
DRIVER = """---
name: Ledger
id: ledger
description: A test ledger.
version: 1.0.0
kind: sdk
package: ledgerpkg
package_manager: local
import_style: python
install:
  - { method: vendored, path: ../../packages/ledgerpkg }
network:
  egress: []
implements:
  - tool: ../../.tools/append/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk: { function_ref: "append", args_template: { text: "${input.text}" } }
  - tool: ../../.tools/once/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk: { function_ref: "once", args_template: { text: "${input.text}" } }
---
"""
PACKAGE = """
import os, pathlib, time

def append(text):
    with open(os.environ["LEDGER_DIR"] + "/ledger.txt", "a") as handle:
        handle.write(text + "\\n")
    return {"count": 1, "text": text}

def once(text):
    # The first call of a text hangs (its worker is killed meanwhile);
    # any later one answers.
    mark = pathlib.Path(os.environ["LEDGER_DIR"], "once-" + text)
    if not mark.exists():
        mark.write_text(str(os.getpid()))
        time.sleep(3600)
    return {"done": text}
"""


def _workspace(ws: Path) -> Path:
    for tool in ("append", "once"):
        (ws / ".tools" / tool).mkdir(parents=True)
        (ws / ".tools" / tool / "TOOL.md").write_text(TOOL.format(name=tool))
    (ws / ".drivers" / "ledger").mkdir(parents=True)
    (ws / ".drivers" / "ledger" / "DRIVER.md").write_text(DRIVER)
    (ws / "packages" / "ledgerpkg").mkdir(parents=True)
    (ws / "packages" / "ledgerpkg" / "__init__.py").write_text(PACKAGE)
    text = {"name": "text", "type": "string", "resolution": {"rule": "literal", "default": "x"}}
    write_plan(
        ws,
        inputs=[text],
        actions={"aileron:ledger.append": WRITE},
        steps=[
            {"id": "write", "kind": "action-call", "actionRef": "aileron:ledger.append"}
            | {"args": {"text": "inputs.text"}, "outputs": ["receipt"]},
        ],
    )
    return ws / "SKILL.md"


@dataclass
class Site:
    """A workspace with the ledger driver, a data directory shared by the
    launcher and a `flightdeck worker` serving `queue` on `address`."""

    address: str
    ws: Path
    home: Path
    plan: Path
    queue: str

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "FLIGHTDECK_HOME": str(self.home), "LEDGER_DIR": str(self.ws)}

    def fd(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [FD, *args],
            capture_output=True,
            text=True,
            env=env or self.env,
            cwd=cwd,
            timeout=120,
            check=False,
        )

    def worker(self, *extra: str) -> subprocess.Popen[str]:
        argv = [FD, "worker", "--workspace", str(self.ws), "--task-queue", self.queue, *extra]
        proc = subprocess.Popen(
            [*argv, "--temporal", self.address], env=self.env, stderr=subprocess.PIPE, text=True
        )
        line = proc.stderr.readline() if proc.stderr else ""
        assert line.startswith("worker ready"), line
        return proc

    def writes(self, text: str) -> int:
        ledger = self.ws / "ledger.txt"
        return ledger.read_text().splitlines().count(text) if ledger.exists() else 0

    def status(self, run_id: str) -> str:
        shown = self.fd("runs", "show", run_id, *JSON)
        return str(json.loads(shown.stdout)["status"]) if shown.returncode == 0 else "?"

    def launch(self, text: str, *extra: str) -> subprocess.CompletedProcess[str]:
        flags = ["--executor", "temporal", "--temporal", self.address, "--task-queue", self.queue]
        args = [str(self.plan), "--unsigned", "--workspace", str(self.ws), "--input"]
        return self.fd("launch", *args, f"text={text}", *flags, *extra, *JSON)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


# A `[[hooks]]` command: appends each event it reads on stdin to a file.
RECORDER = (
    "import json, sys; open(sys.argv[1], 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')"
)


@pytest.fixture(scope="module")
def site(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("site")
    ws = root / "ws"
    here = Site(server, ws, root / "home", _workspace(ws), "routing")
    (here.home / "config").mkdir(parents=True)
    command = json.dumps([sys.executable, "-c", RECORDER, str(root / "events.jsonl")])
    (here.home / "config" / "config.toml").write_text(f"[[hooks]]\ncommand = {command}\n")
    worker = here.worker()
    yield here
    _stop(worker)


def _held(site: Site, text: str) -> str:
    """A detached run of the plan, held on the cluster for the approval of
    its write."""
    started = site.launch(text, "--detach")
    assert started.returncode == 0, started.stderr
    run_id = str(json.loads(started.stdout)["run_id"])
    wait_for(lambda: site.status(run_id) == "pending-approval", "the run to hold")
    return run_id


def _hint_command(error: dict[str, Any]) -> list[str]:
    """The command a refusal's hint ends with, as argv for this interpreter's CLI."""
    command = shlex.split(str(error["hint"]).split(": ", 1)[1])
    assert command[0] == "flightdeck", error
    return command[1:]


def test_detach_json_is_ok_for_a_run_that_started(site: Site) -> None:
    started = site.launch(uuid.uuid4().hex, "--detach")
    assert started.returncode == 0, started.stderr
    result = json.loads(started.stdout)
    assert result["status"] == "running" and result["ok"] is True
    assert result["plan"] == "test-plan" and result["run_id"].startswith("run-")


def test_a_resume_typed_without_the_temporal_flags_never_runs_here(site: Site) -> None:
    """As the docs show it: `launch --resume RUN --approve STEP`, no flags. The
    run's workflow is open on the cluster: the resume is refused before it
    writes anything, and the hint's command decides the step there."""
    text = uuid.uuid4().hex
    run_id = _held(site, text)
    # Typed in the workspace, whose drivers a local walk would use.
    resume = ["launch", "--resume", run_id, "--approve", "write"]
    resumed = site.fd(*resume, *JSON, cwd=site.ws)
    assert resumed.returncode == 1, resumed.stdout
    refusal = json.loads(resumed.stdout)
    assert refusal["ok"] is False and refusal["error"]["code"] == "temporal.run_open"
    assert site.writes(text) == 0  # nothing ran here
    # Named explicitly, the local executor is refused as well.
    local = site.fd(*resume, "--executor", "local", cwd=site.ws)
    assert local.returncode == 1 and "resume.executor_mismatch" in local.stderr
    assert site.writes(text) == 0 and site.status(run_id) == "pending-approval"
    hinted = _hint_command(refusal["error"])
    assert hinted == ["runs", "approve", run_id, "write", "--temporal", site.address]
    approve = site.fd(*hinted)
    assert approve.returncode == 0, approve.stderr
    wait_for(lambda: site.status(run_id) == "completed", "the run to complete")
    assert site.writes(text) == 1


def test_runs_approve_finds_the_cluster_without_the_flag(site: Site, tmp_path: Path) -> None:
    # From a machine whose journal does not hold the run: `[temporal] address`.
    text = uuid.uuid4().hex
    elsewhere = _held(site, text)
    (tmp_path / "flightdeck.toml").write_text(f'[temporal]\naddress = "{site.address}"\n')
    other = {**site.env, "FLIGHTDECK_HOME": str(tmp_path / "other-home")}
    assert site.fd("config", "trust", str(tmp_path), env=other).returncode == 0
    approved = site.fd("runs", "approve", elsewhere, "write", env=other, cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    # From the launcher's machine: the run's record names its cluster, even
    # where the configuration now names another.
    recorded = _held(site, uuid.uuid4().hex)
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "flightdeck.toml").write_text(f'[temporal]\naddress = "127.0.0.1:{_free_port()}"\n')
    approved = site.fd("runs", "approve", recorded, "write", *JSON, cwd=moved)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    said = json.loads(approved.stdout)
    assert said["ok"] is True and said["steps"] == ["write"] and said["decision"] == "approved"
    assert non_snake_keys(said) == []  # tests/cli/test_json_casing.py cannot reach a cluster
    for run_id in (recorded, elsewhere):
        wait_for(lambda run_id=run_id: site.status(run_id) == "completed", "the run")
    assert site.writes(text) == 1


def test_approve_without_any_address_is_refused_with_a_code(site: Site, tmp_path: Path) -> None:
    other = {**site.env, "FLIGHTDECK_HOME": str(tmp_path / "other-home")}
    refused = site.fd("runs", "approve", "run-x", "write", *JSON, env=other, cwd=tmp_path)
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "temporal.no_address" and "--temporal" in error["hint"]


def test_a_run_is_not_resumed_on_another_cluster(site: Site) -> None:
    """NOT_FOUND on another address than the run's: it may still be open
    where it lives, so nothing starts there; the hint resumes it at home."""
    text = uuid.uuid4().hex
    ended = site.launch(text)  # attached, no approval: ends pending-approval, workflow closed
    assert ended.returncode == 3, ended.stderr
    run_id = str(json.loads(ended.stdout)["run_id"])
    # Its workflow closed: no signal reaches it, and the hint says how to go on.
    signalled = site.fd("runs", "approve", run_id, "write", *JSON)
    assert signalled.returncode == 1
    closed = json.loads(signalled.stdout)["error"]
    assert closed["code"] == "temporal.no_open_run"
    assert _hint_command(closed) == ["launch", "--resume", run_id, "--approve", "write"]
    with started_server(_free_port()) as other:
        there = ["--executor", "temporal", "--temporal", other, "--detach"]
        moved = site.fd("launch", "--resume", run_id, "--approve", "write", *there, *JSON)
        assert moved.returncode == 1, moved.stdout
        error = json.loads(moved.stdout)["error"]
        assert error["code"] == "temporal.run_not_found"
    assert site.writes(text) == 0
    home = site.fd(*_hint_command(error), "--approve", "write", *JSON)
    assert home.returncode == 0, home.stdout + home.stderr
    assert json.loads(home.stdout)["status"] == "completed" and site.writes(text) == 1


def test_runs_show_asks_the_run_s_cluster(site: Site) -> None:
    run_id = _held(site, uuid.uuid4().hex)
    shown = json.loads(site.fd("runs", "show", run_id, *JSON).stdout)
    assert shown["ok"] is True and shown["executor"] == "temporal"
    live = shown["temporal"]
    assert live["address"] == site.address and live["workflow"] == "RUNNING"
    assert live["waiting"] == ["write"]
    assert site.fd("runs", "approve", run_id, "write").returncode == 0
    wait_for(lambda: site.status(run_id) == "completed", "the run to complete")
    shown = json.loads(site.fd("runs", "show", run_id, *JSON).stdout)
    assert shown["temporal"]["workflow"] == "COMPLETED" and shown["finished_at"] is not None


def _events(site: Site, run_id: str) -> list[tuple[str, Any]]:
    path = site.home.parent / "events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    events = [json.loads(line) for line in lines]
    return [(e["event"], e["fields"].get("status")) for e in events if e["run_id"] == run_id]


def test_hooks_see_a_held_run_finish_once(site: Site) -> None:
    """Held for an approval, the run paused (`approval.waiting`); approved, it
    finished: one `run.finished`, after which no other comes."""
    run_id = _held(site, uuid.uuid4().hex)
    wait_for(lambda: bool(_events(site, run_id)), "the approval.waiting hook")
    assert site.fd("runs", "approve", run_id, "write", "--temporal", site.address).returncode == 0
    # Hooks run in firing order: once the completion is delivered, so is
    # everything fired before it.
    wait_for(lambda: ("run.finished", "completed") in _events(site, run_id), "run.finished")
    assert _events(site, run_id) == [("approval.waiting", None), ("run.finished", "completed")]
    audit = json.loads(site.fd("runs", "show", run_id, *JSON).stdout)["audit"]
    kinds = [record["kind"] for record in audit]
    assert kinds.count("launch.finish") == 1 and kinds.count("launch.pause") == 1


def _history_gap(address: str, run_id: str) -> list[float]:
    """Seconds each workflow task waited before it timed out unstarted
    (SCHEDULE_TO_START: on a sticky queue nobody polls any more), from the
    server's own event times."""
    import asyncio

    from temporalio.api.enums.v1 import EventType, TimeoutType
    from temporalio.client import Client

    async def history() -> Any:
        client = await Client.connect(address)
        return await client.get_workflow_handle(run_id).fetch_history()

    gaps, scheduled = [], None
    for event in asyncio.run(history()).events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            scheduled = event.event_time.ToDatetime()
        timed_out = event.workflow_task_timed_out_event_attributes
        if (
            event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
            and timed_out.timeout_type == TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START
            and scheduled is not None
        ):
            gaps.append((event.event_time.ToDatetime() - scheduled).total_seconds())
    return gaps


def test_a_lost_worker_s_run_waits_the_configured_sticky_timeout(
    site: Site, tmp_path: Path
) -> None:
    """docs/launch.md: the worker that holds a run cached is lost; its step
    moves on after the heartbeat timeout, and the run's next task waits on
    that worker's sticky queue for `[temporal] sticky_timeout` (here 12 s,
    over the default 10) before any worker takes it. Measured by the
    server's event times (a lower bound: the server never times out early)."""
    ws = tmp_path / "ws"
    shutil.copytree(site.ws, ws)
    (ws / "flightdeck.toml").write_text("[temporal]\nheartbeat_timeout = 2\nsticky_timeout = 12\n")
    plan = write_plan(
        tmp_path,
        inputs=[{"name": "text", "type": "string", "resolution": {"rule": "literal"}}],
        actions={"aileron:ledger.once": contract()},
        steps=[
            {"id": "once", "kind": "action-call", "actionRef": "aileron:ledger.once"}
            | {"args": {"text": "inputs.text"}, "outputs": ["done"]},
        ],
    )
    here = Site(site.address, ws, site.home, plan, "sticky")
    first = here.worker()
    second = None
    try:
        text = uuid.uuid4().hex
        started = here.launch(text, "--detach")
        assert started.returncode == 0, started.stderr
        run_id = json.loads(started.stdout)["run_id"]
        mark = ws / f"once-{text}"
        wait_for(mark.exists, "the step to start")
        assert mark.read_text() == str(first.pid)  # the run is cached there too
        second = here.worker()
        _stop(first)
        wait_for(lambda: site.status(run_id) == "completed", "the run to complete", limit=120)
    finally:
        for proc in (first, second):
            if proc is not None:
                _stop(proc)
    gaps = _history_gap(site.address, run_id)
    assert gaps and all(gap >= 12 for gap in gaps), gaps


def test_runs_show_without_the_cluster_still_shows_the_journal(tmp_path: Path) -> None:
    """The run's cluster does not answer: `runs show` says why, beside the
    journal's report, and exits 0 (`ok` as the exit status)."""
    from flightdeck.launch import Journal

    nobody = f"127.0.0.1:{_free_port()}"
    journal = Journal(tmp_path / "home" / "data" / "runs.sqlite3")
    journal.create_run(
        "run-away",
        plan_name="p",
        plan_path="/p/SKILL.md",
        content_hash=None,
        launch_time="t",
        inputs={},
        options={},
        executor="temporal",
        cluster={"address": nobody, "namespace": "default", "task_queue": "q"},
    )
    journal.close()
    env = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "home")}
    shown = subprocess.run(
        [FD, "runs", "show", "run-away", *JSON],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["ok"] is True and report["status"] == "running"
    assert report["temporal"]["address"] == nobody
    assert report["temporal"]["error"]["code"] == "temporal.unavailable"
    argv = [FD, "runs", "show", "run-away"]
    text = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert text.returncode == 0 and "temporal.unavailable" in text.stdout
