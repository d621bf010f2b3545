"""Issue 28: what a resume asks the cluster, and what each answer means.

Against a real dev server: the client fails closed on any answer but the
workflow's own or NOT_FOUND; NOT_FOUND on the run's recorded cluster (the
run never started there, or its history is gone) lets the journal decide;
a run resumes only on the executor it was launched with.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import (
    Approvals,
    Journal,
    LaunchError,
    LaunchOptions,
    RunResult,
    StepSettings,
    launch,
)

from . import _temporal_support as support
from ._temporal_env import dev_server, free_port, started_server, wait_for
from .conftest import contract, write_plan

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

server = pytest.fixture(scope="module")(dev_server)
ROOT = Path(__file__).resolve().parents[2]
QUEUE = "fd-resume"


def _plan(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        actions={"aileron:m.fetch": contract(), "aileron:m.publish": contract(effect="write")},
        steps=[
            {"id": "fetch", "kind": "action-call", "actionRef": "aileron:m.fetch"}
            | {"outputs": ["series"]},
            {"id": "publish", "kind": "action-call", "actionRef": "aileron:m.publish"}
            | {"args": {"s": "steps.fetch.series"}, "outputs": ["issue"]},
        ],
    )


def _engine(address: str, **changes: Any) -> Any:
    from flightdeck.launch import TemporalEngine

    return TemporalEngine(address, QUEUE, heartbeat_timeout=support.HEARTBEAT_TIMEOUT, **changes)


def _launch(home: Path, engine: Any, plan: Path | None, **options: Any) -> RunResult:
    opts = LaunchOptions(
        unsigned=True,
        out_dir=home / "out",
        settings=StepSettings(retry_base_delay=0.0),
        approvals=Approvals.build(options.pop("approve", ())),
        **options,
    )
    return asyncio.run(launch(plan, opts, support.runtime(home, engine=engine)))


def _worker(address: str, home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tests.launch._temporal_support", address, QUEUE, str(home)]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    assert line.strip() == "ready", f"the worker did not start (exit {proc.poll()})"
    return proc


@pytest.fixture
def worker(server: str, tmp_path: Path) -> Iterator[Path]:
    """A worker on the module's server, with its home (journal, audit)."""
    proc = _worker(server, tmp_path)
    yield tmp_path
    proc.kill()
    proc.wait(timeout=30)


def _rows(home: Path, run_id: str) -> list[tuple[str, str]]:
    return [(r.step_id, r.status) for r in Journal(home / "runs.sqlite3").steps(run_id)]


def test_any_answer_but_the_workflow_or_not_found_refuses(server: str) -> None:
    """The server refuses an empty workflow id (INVALID_ARGUMENT): an answer
    that says nothing of the run refuses the resume, the approval and the
    report, and is not mistaken for "no open run"."""
    from flightdeck.launch import describe_run, signal_approval

    engine = _engine(server)
    for ask in (
        engine.check_resumable("", None),
        engine.check_resumable("", engine.cluster()),
        signal_approval(server, "", ["publish"]),
        describe_run(server, ""),
    ):
        with pytest.raises(LaunchError) as refused:
            asyncio.run(ask)
        assert refused.value.code == "temporal.unavailable"
        assert "INVALID_ARGUMENT" in refused.value.message


def test_not_found_on_the_run_s_own_cluster_lets_the_journal_decide(
    server: str, tmp_path: Path
) -> None:
    """A launcher lost before its workflow started (here: the server was
    down) leaves a run recorded on that cluster and unknown to it. Once the
    server is up, the resume starts the run there."""
    plan, port = _plan(tmp_path / "plan"), free_port()
    address = f"127.0.0.1:{port}"
    with pytest.raises(LaunchError) as down:
        _launch(tmp_path, _engine(address), plan, approve=["publish"])
    assert down.value.code == "temporal.unavailable"
    [row] = Journal(tmp_path / "runs.sqlite3").runs()
    assert row.executor == "temporal" and row.cluster is not None
    assert row.cluster["address"] == address and row.cluster["task_queue"] == QUEUE
    with started_server(port) as restarted:
        assert restarted == address
        from flightdeck.launch import describe_run

        # `runs show`: the cluster has no history of the run.
        assert asyncio.run(describe_run(address, row.run_id)) == {"workflow": None, "waiting": []}
        proc = _worker(address, tmp_path)
        try:
            resumed = _launch(
                tmp_path, _engine(address), None, resume=row.run_id, approve=["publish"]
            )
        finally:
            proc.kill()
            proc.wait(timeout=30)
    assert resumed.status == "completed", resumed.error
    assert _rows(tmp_path, row.run_id) == [("fetch", "completed"), ("publish", "completed")]


def test_a_run_resumes_only_on_its_executor(worker: Path, server: str) -> None:
    home, plan = worker, _plan(worker / "plan")
    on_temporal = _launch(home, _engine(server), plan)
    assert on_temporal.status == "pending-approval"
    local = _launch(home / "local", None, plan)
    assert local.status == "pending-approval"
    hints = []
    for where, engine, run in ((home, None, on_temporal), (home / "local", _engine(server), local)):
        before = _rows(where, run.run_id)
        with pytest.raises(LaunchError) as refused:
            _launch(where, engine, None, resume=run.run_id, approve=["publish"])
        assert refused.value.code == "resume.executor_mismatch"
        assert _rows(where, run.run_id) == before  # refused before it wrote anything
        hints.append(refused.value.hint or "")
    assert hints[0].endswith(
        f"--resume {on_temporal.run_id} --executor temporal --temporal {server}"
    )
    assert hints[1].endswith(f"--resume {local.run_id} --executor local")
    # Each on its own executor, the same resume completes.
    done = _launch(home, _engine(server), None, resume=on_temporal.run_id, approve=["publish"])
    assert done.status == "completed"
    done = _launch(home / "local", None, None, resume=local.run_id, approve=["publish"])
    assert done.status == "completed"


def test_an_open_run_no_worker_answers_for_is_still_refused(tmp_path: Path) -> None:
    """No worker serves the run's queue: the query of what it waits for gets
    no answer, and the resume is refused all the same; `runs show` says
    the run is open and that nobody said what it waits for. On a namespace
    of its own, which the hint names."""
    from flightdeck.launch import describe_run

    with started_server(free_port(), "fd-other") as lonely:
        engine = _engine(lonely, detach=True, namespace="fd-other")
        started = _launch(tmp_path, engine, _plan(tmp_path / "plan"))
        assert started.status == "running"
        with pytest.raises(LaunchError) as refused:
            _launch(tmp_path, _engine(lonely, namespace="fd-other"), None, resume=started.run_id)
        assert refused.value.code == "temporal.run_open"
        hint = f"runs show {started.run_id} --temporal {lonely} --namespace fd-other"
        assert (refused.value.hint or "").endswith(hint)
        live = asyncio.run(describe_run(lonely, started.run_id, "fd-other"))
    assert live == {"workflow": "RUNNING", "waiting": None}


class _Racing:
    """A resume that lost the race: the run was started again between the
    check and the start (the check is skipped to stand for that window)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.executor = engine.executor

    def cluster(self) -> dict[str, Any]:
        return dict(self.engine.cluster())

    async def check_resumable(self, run_id: str, recorded: Any) -> None:
        return None

    async def run(self, *args: Any) -> Any:
        return await self.engine.run(*args)


def test_a_start_that_finds_the_run_open_is_refused(tmp_path: Path) -> None:
    with started_server(free_port()) as lonely:
        started = _launch(tmp_path, _engine(lonely, detach=True), _plan(tmp_path / "plan"))
        with pytest.raises(LaunchError) as refused:
            _launch(tmp_path, _Racing(_engine(lonely)), None, resume=started.run_id)
    assert refused.value.code == "temporal.run_open"


def test_a_namespace_the_cluster_lacks_is_a_located_error(server: str, tmp_path: Path) -> None:
    with pytest.raises(LaunchError) as refused:
        _launch(tmp_path, _engine(server, namespace="fd-none"), _plan(tmp_path / "plan"))
    assert refused.value.code == "temporal.unavailable"
    assert "NOT_FOUND" in refused.value.message and "fd-none" in refused.value.message


def _attached(tmp_path: Path, address: str) -> tuple[threading.Thread, list[Any]]:
    """An attached launch waiting in a thread for a run no worker walks."""
    outcome: list[Any] = []

    def wait() -> None:
        try:
            outcome.append(_launch(tmp_path, _engine(address), _plan(tmp_path / "plan")))
        except LaunchError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=wait)
    thread.start()
    wait_for(lambda: bool(Journal(tmp_path / "runs.sqlite3").runs()), "the run to start")
    return thread, outcome


def test_an_attached_launcher_reports_a_run_ended_under_it(tmp_path: Path) -> None:
    """The workflow is terminated while its launcher waits: the launcher says
    so, with the cause, instead of a traceback."""
    from temporalio.client import Client
    from temporalio.service import RPCError

    with started_server(free_port()) as lonely:
        thread, outcome = _attached(tmp_path, lonely)
        [row] = Journal(tmp_path / "runs.sqlite3").runs()

        async def terminate() -> None:
            client = await Client.connect(lonely)
            handle = client.get_workflow_handle(row.run_id)
            for _ in range(100):  # the start may trail the journal row
                try:
                    await handle.terminate(reason="operator stop")
                    return
                except RPCError:  # not started yet
                    await asyncio.sleep(0.1)

        asyncio.run(terminate())
        thread.join(timeout=60)
    [ended] = outcome
    assert isinstance(ended, LaunchError) and ended.code == "temporal.run_failed"
    assert "operator stop" in ended.message  # the cause: the reason it was terminated for


def test_an_attached_launcher_that_loses_the_server_says_so(tmp_path: Path) -> None:
    with started_server(free_port()) as lonely:
        thread, outcome = _attached(tmp_path, lonely)
    thread.join(timeout=300)  # the client's retries give up first
    [lost] = outcome
    assert isinstance(lost, LaunchError) and lost.code == "temporal.unavailable"
    assert "lost run" in lost.message
