"""Issue 31, item 2: a Temporal run's `source` inputs are read on a worker.

The launcher and the workers each run in a home of their own over one
PostgreSQL store and one Temporal dev server; the source's action answers
only where FD_SOURCE_TOKEN is set, which only the workers have. The run
completes, the read is made once and audited once (`launch.action_call` of
`inputs.NAME`, `launch.run` with its `source_reads`), and the run row holds
the value, as a local launch records it. A worker killed mid-read repeats a
read that is safe to retry on another worker, and never one that is not.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import (
    Journal,
    LaunchError,
    LaunchOptions,
    RunResult,
    StepSettings,
    TemporalEngine,
    launch,
)

from . import _temporal_support as support
from ._temporal_env import dev_server, wait_for
from .conftest import contract, write_plan

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

server = pytest.fixture(scope="module")(dev_server)
ROOT = Path(__file__).resolve().parents[2]
QUEUE = "fd-sources"
READ = contract()
UNSAFE_READ = contract(idempotency={"safeToRetry": False, "idempotencyKey": False})


class Fleet:
    """Two workers, each in its own home with the source's token; the
    launcher (this test process) in a third home without it."""

    def __init__(self, address: str, root: Path) -> None:
        self.address, self.root = address, root
        self.launcher_home = root / "launcher"
        self.witness = root / "source-system"
        for folder in (self.launcher_home, self.witness):
            folder.mkdir(parents=True)
        self.workers: list[subprocess.Popen[str]] = []
        for n in range(2):
            home = root / f"worker-{n}"
            home.mkdir()
            env = {
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "FLIGHTDECK_HOME": str(home),
                "FD_SOURCE_TOKEN": "west",
                "FD_WITNESS": str(self.witness),
            }
            argv = [sys.executable, "-m", "tests.launch._temporal_support", address, QUEUE]
            proc = subprocess.Popen(
                [*argv, str(home)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
            )
            line = proc.stdout.readline() if proc.stdout else ""
            assert line.strip() == "ready", f"a worker did not start (exit {proc.poll()})"
            self.workers.append(proc)

    def launch(self, plan: Path, **changes: Any) -> RunResult:
        engine = TemporalEngine(self.address, QUEUE, heartbeat_timeout=support.HEARTBEAT_TIMEOUT)
        options = LaunchOptions(
            unsigned=True,
            out_dir=self.root / "out",
            settings=StepSettings(retry_base_delay=0.0),
            **changes,
        )
        runtime = support.runtime(self.launcher_home, engine=engine)
        return asyncio.run(launch(plan if "resume" not in changes else None, options, runtime))

    def reads(self) -> list[str]:
        """`<n>-<pid>` of each read the source system saw."""
        return sorted(p.name for p in self.witness.glob("calls/*.inputs.region/*"))

    def stop(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture
def fleet(
    server: str, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Fleet]:
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    monkeypatch.delenv("FD_SOURCE_TOKEN", raising=False)
    running = Fleet(server, tmp_path)
    yield running
    running.stop()


def _plan(folder: Path, source: str, tc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        inputs=[
            {"name": "n", "type": "number", "resolution": {"rule": "literal", "default": 2}},
            {
                "name": "region",
                "type": "string",
                "resolution": {
                    "rule": "source",
                    "source": {"actionRef": f"aileron:{source}", "select": "region"},
                },
            },
        ],
        actions={f"aileron:{source}": tc, "aileron:m.fetch": READ},
        steps=[
            {
                "id": "fetch",
                "kind": "action-call",
                "actionRef": "aileron:m.fetch",
                "args": {"n": "inputs.n", "region": "inputs.region"},
                "outputs": ["series"],
            }
        ],
    )


def _probes(fleet: Fleet) -> list[str]:
    """`<n>-<pid>` of each credential probe the source system saw."""
    return sorted(p.name for p in fleet.witness.glob("calls/*.verify.token/*"))


def test_credential_probes_run_on_a_worker_before_the_run_exists(
    fleet: Fleet, tmp_path: Path
) -> None:
    """`--verify-credentials` on Temporal probes where the steps will run:
    the launcher, without the token, could not. A failed probe creates no
    run, as locally."""
    probed = contract(verification={"method": "GET", "path": "/me"})
    plan = _plan(tmp_path / "plan", "src.token", probed)
    result = fleet.launch(plan, verify_credentials=True)
    assert result.status == "completed", result.to_dict()
    assert [(p["action"], p["status"]) for p in result.probes] == [("aileron:src.token", "ok")]
    (probe,) = _probes(fleet)
    assert int(probe.split("-")[1]) in {w.pid for w in fleet.workers}
    records = [r for r in _records(result.run_id) if r.kind == "launch.credential_probe"]
    assert [r.fields["result"] for r in records] == ["ok"]
    revoked = contract(verification={"method": "GET", "path": "/revoked"})
    plan = _plan(tmp_path / "revoked", "src.token", revoked)
    with pytest.raises(LaunchError) as raised:
        fleet.launch(plan, verify_credentials=True)
    assert raised.value.code == "credential.verification_failed"
    assert "aileron:src.token" in raised.value.message
    assert len(_probes(fleet)) == 2 and len(Journal().runs()) == 1  # no second run


def _records(run_id: str) -> list[Any]:
    from flightdeck.audit import default_sink

    return list(default_sink().records(run_id=run_id))


def test_the_source_is_read_on_a_worker_once_and_recorded_as_locally(
    fleet: Fleet, tmp_path: Path
) -> None:
    plan = _plan(tmp_path / "plan", "src.token", READ)
    # The launcher cannot reach the source: a local read would fail here.
    assert "FD_SOURCE_TOKEN" not in os.environ
    result = fleet.launch(plan)
    assert result.status == "completed", result.to_dict()
    assert len(fleet.reads()) == 1
    row = Journal().run(result.run_id)
    assert row is not None and row.inputs == {"n": 2, "region": "eu-west"}
    assert row.executor == "temporal"
    records = _records(result.run_id)
    kinds = [r.kind for r in records]
    reads = [r for r in records if r.kind == "launch.action_call"]
    assert [r.fields["step"] for r in reads] == ["inputs.region", "fetch"], kinds
    (run,) = [r for r in records if r.kind == "launch.run"]
    assert run.fields["inputs"] == {"n": 2, "region": "eu-west"}
    (read,) = run.fields["source_reads"]
    assert read["input"] == "region" and read["action_ref"] == "aileron:src.token"
    assert read["select"] == "region" and read["result_hash"].startswith("sha256:")
    # The read's own record comes first, then the run's, then its steps', as locally.
    assert kinds.index("launch.run") < kinds.index("launch.finish")
    assert kinds.index("launch.action_call") < kinds.index("launch.run")
    # `runs show` from a home that took no part sees the inputs the worker read.
    other = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "operator")}
    shown = subprocess.run(
        [sys.executable, "-m", "flightdeck", "runs", "show", result.run_id, "--format", "json"],
        env=other,
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert '"eu-west"' in shown.stdout
    assert "inputs_pending" not in json.loads(shown.stdout)  # read, and in the row


def test_a_source_read_that_needs_approval_is_refused_before_the_run(
    fleet: Fleet, tmp_path: Path
) -> None:
    write = contract(effect="write", idempotency={"safeToRetry": True, "idempotencyKey": False})
    plan = _plan(tmp_path / "plan", "src.token", write)
    with pytest.raises(LaunchError) as raised:
        fleet.launch(plan)
    assert raised.value.code == "approval.required"
    assert fleet.reads() == [] and Journal().runs() == []


def _kill_the_reader(
    fleet: Fleet, plan: Path, while_reading: Callable[[], None] = lambda: None
) -> RunResult:
    """Launch; kill -9 the worker whose read hangs (after `while_reading`);
    return the run's result."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(fleet.launch, plan)
        wait_for(lambda: fleet.reads(), "the first read", 60.0)
        while_reading()
        pid = int(fleet.reads()[0].split("-")[1])
        os.kill(pid, signal.SIGKILL)
        return running.result(timeout=300)


def test_a_worker_lost_mid_read_safe_to_retry_reads_again_elsewhere(
    fleet: Fleet, tmp_path: Path
) -> None:
    plan = _plan(tmp_path / "plan", "src.token_hang", READ)

    def shown_while_reading() -> None:
        # From a home that took no part: the run, and the input it waits for.
        (run,) = Journal().runs()
        other = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "operator")}
        argv = [sys.executable, "-m", "flightdeck", "runs", "show", run.run_id]
        shown = subprocess.run(
            [*argv, "--format", "json"], env=other, capture_output=True, text=True, check=False
        )
        assert json.loads(shown.stdout)["inputs_pending"] == ["region"], shown.stdout
        text = subprocess.run(argv, env=other, capture_output=True, text=True, check=False)
        assert "inputs being read on a worker: region" in text.stdout, text.stdout

    result = _kill_the_reader(fleet, plan, shown_while_reading)
    assert result.status == "completed", result.to_dict()
    assert len(fleet.reads()) == 2  # the killed read and the one that answered
    records = _records(result.run_id)
    # The killed try ended with its process: only the answered one is audited.
    steps = [r.fields["step"] for r in records if r.kind == "launch.action_call"]
    assert steps == ["inputs.region", "fetch"]
    assert [r.kind for r in records].count("launch.run") == 1


def test_a_worker_lost_mid_read_not_safe_to_retry_is_not_read_twice(
    fleet: Fleet, tmp_path: Path
) -> None:
    plan = _plan(tmp_path / "plan", "src.token_hang", UNSAFE_READ)
    result = _kill_the_reader(fleet, plan)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "resume.in_doubt"
    assert "launch the plan again" in (result.error.hint or "")
    assert len(fleet.reads()) == 1
    assert result.steps == {"fetch": "blocked"}
    row = Journal().run(result.run_id)
    assert row is not None and row.status == "failed" and "region" not in row.inputs
    kinds = [r.kind for r in _records(result.run_id)]
    assert "launch.run" not in kinds and kinds.count("launch.finish") == 1
    # A resume would have to read again: refused, nothing read.
    with pytest.raises(LaunchError) as raised:
        fleet.launch(plan, resume=result.run_id)
    assert raised.value.code == "resume.inputs_unread"
    assert len(fleet.reads()) == 1
