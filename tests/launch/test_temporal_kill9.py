"""Issue 20, "Done when": kill -9 of the launcher and of a worker at random
points of runs on Temporal loses no completed step and repeats no
non-idempotent write; the outputs are the local executor's.

A real dev server (`_temporal_env`), two worker processes and a launcher
process per launch or resume (`_temporal_support`). A chaos thread, seeded,
kills one of them with SIGKILL again and again, after a random pause: the
launcher, any worker, or (most often) the worker that just started a step,
at a random time into that step; a killed worker is replaced at once. The
test plays the operator: after a launcher is killed it resumes the run; a
resume refused with `temporal.run_open` (the run goes on without its
launcher) makes it wait for the run's end; when a run reports
`resume.in_doubt` it looks at the target system (the ledger side file, one
line per write) and resumes with `accept` if the write is there, `retry` if
not. The assertions are on the side file, on the journal seen between
launches, and on the outputs and audit of a local run of the same plan.
`FD_KILL9_SEED=N` runs another campaign.

Over PostgreSQL the runs go two at a time, each from its own launcher
process in its own home (issue 31: two launchers, three workers): a round
starts one run per lane, the chaos kills among both launchers and every
worker, and each lane plays the operator of its own run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import Approvals, LaunchOptions, StepSettings, launch

from . import _temporal_support as support
from ._ledger_plan import IDEMPOTENT, NON_IDEMPOTENT, STEPS, ledger_plan
from ._temporal_env import dev_server

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

server = pytest.fixture(scope="module")(dev_server)
ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("FD_KILL9_SEED", "20"))  # another seed: another campaign
KILLS = 10  # at least this many kill -9s, over at least MIN_RUNS runs
MIN_RUNS = 3
MAX_RUNS = 8
KILLS_PER_RUN = 4  # in a round, times its runs
PAUSE = (0.2, 1.5)  # seconds between two kills: start-up, steps, waits, ends


class Chaos:
    """Two workers (or more), the launchers of the runs under way, and a
    thread that kills one of them at random points while `active`."""

    def __init__(
        self,
        address: str,
        home: Path,
        rng: random.Random,
        *,
        separate_homes: bool = False,
        workers: int = 2,
    ) -> None:
        self.address, self.queue, self.home, self.rng = address, "fd-kill9", home, rng
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "FLIGHTDECK_HOME": str(home)}
        # With the PostgreSQL store: each worker and launcher process gets a
        # FLIGHTDECK_HOME of its own, sharing nothing but the store and the
        # cluster (`home` stays the target system: ledger, gates, calls).
        self.separate_homes = separate_homes
        self.spawned = 0
        self.lock = threading.Lock()
        self.workers: list[tuple[subprocess.Popen[str], threading.Event]] = []
        self.launchers: list[subprocess.Popen[str]] = []  # one a lane, while it runs
        self.kills: list[str] = []
        self.error: BaseException | None = None  # what stopped the chaos thread
        self.run_kills = 0  # in the current round
        self.kill_budget = KILLS_PER_RUN  # a round's; let its runs end after it
        self.unsafe_kills = 0  # of a worker running a non-idempotent write
        self.active = threading.Event()
        self.stopped = threading.Event()
        for _ in range(workers):
            self._start_worker()
        for _, ready in self.workers:
            assert ready.wait(60), "a worker did not start"
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _env(self) -> dict[str, str]:
        if not self.separate_homes:
            return self.env
        self.spawned += 1
        own = self.home.parent / "homes" / str(self.spawned)
        own.mkdir(parents=True)
        return {**self.env, "FLIGHTDECK_HOME": str(own)}

    def _start_worker(self) -> None:
        argv = [sys.executable, "-m", "tests.launch._temporal_support"]
        proc = subprocess.Popen(
            [*argv, self.address, self.queue, str(self.home)],
            cwd=ROOT,
            env=self._env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = threading.Event()

        def watch() -> None:
            if proc.stdout and proc.stdout.readline().strip() == "ready":
                ready.set()

        threading.Thread(target=watch, daemon=True).start()
        self.workers.append((proc, ready))

    def _loop(self) -> None:
        try:
            while not self.stopped.is_set():
                self.stopped.wait(self.rng.uniform(*PAUSE))
                if self.active.is_set() and not self.stopped.is_set():
                    self._kill_one()
        except BaseException as exc:  # the test fails on it, not only a warning
            self.error = exc
            raise

    def _busy(self, steps: str) -> set[str]:
        """`PID.RUN.STEP` of the steps running now (and of killed workers')."""
        return {path.name for path in (self.home / "busy").glob(f"*.{steps}")}

    def _kill_one(self) -> None:
        if self.run_kills >= self.kill_budget:  # let the round's runs end
            return
        # The first kill of a run aims at the launcher until one has been
        # killed: with three workers to choose from, a seeded campaign could
        # otherwise end without one (the test wants both kinds).
        first = self.run_kills == 0 and "launcher" not in self.kills
        target = "launcher" if first or self.rng.random() < 0.3 else "worker"
        pid, unsafe = None, False
        if target == "worker" and self.rng.random() < 0.75:
            # A worker's death matters while it runs a step: wait for one to
            # start a step, then kill it at a random point of the step or just
            # after it (before or after its write, before or after its report).
            # Half of them, and always the first, wait for a non-idempotent
            # write (`w*`) and kill inside it, so a decision is certain.
            unsafe = not self.unsafe_kills or self.rng.random() < 0.5
            steps, seen = ("w*" if unsafe else "*"), self._busy("w*" if unsafe else "*")
            deadline, started = time.monotonic() + 2.0, set[str]()
            while not started and time.monotonic() < deadline and not self.stopped.is_set():
                time.sleep(0.01)
                started = self._busy(steps) - seen
            if started:
                pid = int(min(started).split(".")[0])
                longest = 2.2 if self.unsafe_kills else 1.6  # steps take 2 of these
                self.stopped.wait(self.rng.uniform(0, longest * support.LEDGER_STEP_SECONDS))
        with self.lock:
            workers = [p for p, ready in self.workers if ready.is_set() and p.poll() is None]
            chosen = [p for p in workers if p.pid == pid]
            victims = chosen or (workers if target == "worker" else [])
            kind = "busy worker" if chosen else "worker"
            launchers = [p for p in self.launchers if p.poll() is None]
            if launchers and not victims:
                victims, kind = launchers, "launcher"
            if not victims:
                return
            proc = self.rng.choice(victims)
            proc.send_signal(signal.SIGKILL)  # not reaped yet, so never a stranger
            self.run_kills += 1
            self.unsafe_kills += bool(chosen and unsafe)
            self.kills.append(kind)
            if kind != "launcher":
                self.workers = [w for w in self.workers if w[0] is not proc]
                proc.wait()
                self._start_worker()

    def launch(self, plan: Path, out: Path, options: dict[str, Any]) -> dict[str, Any] | None:
        """One launcher process; its printed result, or None if it was killed."""
        argv = [sys.executable, "-m", "tests.launch._temporal_support", "launch"]
        argv += [self.address, self.queue, str(self.home), str(plan), str(out)]
        with self.lock:
            launcher = subprocess.Popen(
                [*argv, json.dumps(options)],
                cwd=ROOT,
                env=self._env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            self.launchers.append(launcher)
        try:
            stdout, stderr = launcher.communicate(timeout=120)
        finally:
            with self.lock:
                self.launchers.remove(launcher)
        if launcher.returncode == -signal.SIGKILL:
            return None
        assert launcher.returncode == 0 and stdout.strip(), stderr[-3000:]
        assert "Traceback" not in stderr, stderr[-3000:]
        result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
        return result

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()
        for proc, _ in self.workers:
            proc.send_signal(signal.SIGKILL)
            proc.wait()


@pytest.fixture
def chaos(server: str, tmp_path: Path) -> Iterator[Chaos]:
    (tmp_path / "home").mkdir()
    running = Chaos(server, tmp_path / "home", random.Random(SEED))
    yield running
    running.stop()


@pytest.fixture
def pg_chaos(
    server: str, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Chaos]:
    """The same, over one PostgreSQL store, every process in its own home."""
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    (tmp_path / "home").mkdir()
    running = Chaos(server, tmp_path / "home", random.Random(SEED), separate_homes=True, workers=3)
    yield running
    running.stop()


def _writes(home: Path, run_id: str) -> dict[str, int]:
    path = home / "ledger" / f"{run_id}.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return {step: lines.count(step) for step in STEPS}


def _open_result(address: str, run_id: str) -> dict[str, Any] | None:
    """The run's result once its workflow ends, if one is open; else None."""
    from temporalio.client import Client, WorkflowExecutionStatus
    from temporalio.service import RPCError

    async def wait() -> dict[str, Any] | None:
        handle = (await Client.connect(address)).get_workflow_handle(run_id)
        try:
            described = await handle.describe()
        except RPCError:  # never started: the launcher died before it did
            return None
        if described.status != WorkflowExecutionStatus.RUNNING:
            return None
        result: dict[str, Any] = await handle.result()
        return result

    return asyncio.run(wait())


def _operate(chaos: Chaos, plan: Path, out: Path) -> dict[str, Any]:
    """Launch the plan, then do what an operator does until the run is
    completed; everything observed goes into the record."""
    journal = support.journal_at(chaos.home)
    record: dict[str, Any] = {"run_id": None, "steps": [], "snapshots": [], "decided": []}
    options: dict[str, Any] = {"approve": ["all"]}
    for _ in range(40):
        result = chaos.launch(plan, out, options)
        if record["run_id"] is None:
            # This lane's run is the one writing to `out` (another lane may
            # have recorded a run meanwhile).
            mine = [row.run_id for row in journal.runs(1000) if row.options["out_dir"] == str(out)]
            record["run_id"] = mine[0] if mine else None
        run_id = record["run_id"]
        record["steps"].append({"options": options, "result": result})
        if run_id is None:  # killed before the run was recorded: launch again
            continue
        # After a crash the operator does not repeat a decision blindly: the
        # next resume says again what is in doubt, if anything.
        options = {"approve": ["all"], "resume": run_id}
        if result is None:  # the launcher was killed; the run may go on
            continue
        error = result.get("error") or {}
        if error.get("code") == "temporal.run_open":  # it does: wait for its end
            record["waited"] = record.get("waited", 0) + 1
            result = _open_result(chaos.address, run_id)
            if result is None:  # it ended in between
                continue
            error = result.get("error") or {}
        # The run's workflow is over: the journal and the ledger are still.
        statuses = {row.step_id: row.status for row in journal.steps(run_id)}
        record["snapshots"].append({"writes": _writes(chaos.home, run_id), "statuses": statuses})
        if result["status"] == "completed":
            record["completed"] = True
            return record
        if error.get("code") == "resume.in_doubt":
            step = error["step"]
            record["decided"].append(step)
            if _writes(chaos.home, run_id)[step]:  # the operator checks the target system
                options["accept"] = {step: {"receipt": {"text": step}}}
            else:
                options["retry"] = [step]
    return record


_VOLATILE = {"duration_ms", "started_at", "finished_at", "timestamp", "launch_time"}
# What the kills add to a run's audit: resumes, the operator's decisions,
# and the ends of the workflows that failed on an in-doubt step.
_KILL_RECORDS = {"launch.resume", "resume.decision", "launch.finish", "lifecycle.event"}


def _audit(home: Path, run_id: str, out: Path) -> list[str]:
    """A run's audit records as text, timings dropped, its run id and output
    folder written as placeholders."""
    return [
        json.dumps(
            [r.kind, {k: v for k, v in r.fields.items() if k not in _VOLATILE}],
            sort_keys=True,
            default=str,
        )
        .replace(str(out), "OUT")
        .replace(run_id, "RUN")
        for r in support.audit_at(home).records(run_id=run_id)
    ]


def _local(tmp_path: Path, plan: Path) -> dict[str, Any]:
    home, out = tmp_path / "local", tmp_path / "out-local"
    home.mkdir()
    opts = LaunchOptions(
        unsigned=True,
        out_dir=out,
        approvals=Approvals.build(["all"]),
        settings=StepSettings(retry_base_delay=0.0),
    )
    result = asyncio.run(launch(plan, opts, support.runtime(home)))
    assert result.status == "completed", result.error
    rows = support.journal_at(home).steps(result.run_id)
    return {
        "outputs": {row.step_id: row.result["outputs"] for row in rows},
        "done": json.loads((out / "done.json").read_text()),
        "audit": set(_audit(home, result.run_id, out)),
    }


def _same_audit(
    local: set[str], remote: list[str], first_killed: bool, *, start_atomic: bool = False
) -> None:
    """The run's audit is the local run's, plus what the kills explain.
    `start_atomic`: the store commits the run's row and its `launch.run`
    together (PostgreSQL), so no kill can leave the row without the record."""
    records = [json.loads(text) for text in remote]
    accepted = {
        fields["step"]
        for kind, fields in records
        if kind == "resume.decision" and fields["decision"] == "accept"
    }
    for text in local - set(remote):  # only the calls the operator accepted
        kind, fields = json.loads(text)
        # On SQLite (two files) a launcher killed between the run's journal
        # row and its first audit record leaves no `launch.run`; its resume
        # says `launch.resume` instead.
        if kind == "launch.run" and first_killed and not start_atomic:
            assert any(kind == "launch.resume" for kind, _ in records), text
            continue
        assert kind == "launch.action_call" and fields["step"] in accepted, text
    for text in set(remote) - local:
        kind, fields = json.loads(text)
        assert kind in _KILL_RECORDS, text
        assert fields.get("status") != "completed", text


def test_kill9_of_launcher_and_workers_at_random_points(chaos: Chaos, tmp_path: Path) -> None:
    _campaign(chaos, tmp_path)


def test_kill9_with_workers_and_launchers_in_separate_homes_over_postgresql(
    pg_chaos: Chaos, tmp_path: Path
) -> None:
    """Issue 31: the same campaign with three workers, two runs at a time
    from two launchers, and every launcher process in a home of its own;
    the journal and audit they share are PostgreSQL. Then, from a fifth
    home that took no part: every run shows completed, and its outputs come
    out of the store, the published file gone."""
    records = _campaign(pg_chaos, tmp_path, lanes=2)
    homes = sorted(p.name for p in (tmp_path / "homes").iterdir())
    assert len(homes) >= 5  # three workers, their replacements, launchers
    assert not list((tmp_path / "homes").rglob("*.sqlite3"))  # no process wrote a file store
    fifth = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path / "fifth")}
    flightdeck = str(Path(sys.executable).with_name("flightdeck"))
    for n, record in enumerate(records):
        run_id, done = record["run_id"], record["out"] / "done.json"
        expected = done.read_bytes()
        done.unlink()
        shown = subprocess.run(
            [flightdeck, "runs", "show", run_id, "--format", "json"],
            env=fifth, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert json.loads(shown.stdout)["status"] == "completed"
        fetched = tmp_path / f"fetched-{n}"
        subprocess.run(
            [flightdeck, "runs", "outputs", run_id, "--out-dir", str(fetched)],
            env=fifth, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert (fetched / "done.json").read_bytes() == expected


def _campaign(chaos: Chaos, tmp_path: Path, lanes: int = 1) -> list[dict[str, Any]]:
    """Rounds of `lanes` runs launched at once, each lane operating its own,
    until enough runs and kills; then the assertions, run by run."""
    plan = ledger_plan(tmp_path / "plan")
    local = _local(tmp_path, plan)
    records: list[dict[str, Any]] = []
    rounds: list[int] = []  # the kills of each round
    chaos.kill_budget = KILLS_PER_RUN * lanes
    while len(records) < MIN_RUNS or len(chaos.kills) < KILLS:
        assert len(records) < MAX_RUNS and chaos.error is None, (chaos.kills, chaos.error)
        outs = [tmp_path / f"out-{len(records) + lane}" for lane in range(lanes)]
        chaos.run_kills = 0
        chaos.active.set()
        with ThreadPoolExecutor(lanes) as pool:
            running = [pool.submit(_operate, chaos, plan, out) for out in outs]
            done = [future.result() for future in running]
        chaos.active.clear()
        for record, out in zip(done, outs, strict=True):
            record["out"] = out
        records += done
        rounds.append(len(chaos.kills) - sum(rounds))
    assert len(chaos.kills) >= KILLS
    assert {"busy worker", "launcher"} <= set(chaos.kills), chaos.kills
    # A worker killed inside a non-idempotent write leaves it in doubt.
    assert chaos.unsafe_kills and any(record["decided"] for record in records)
    journal = support.journal_at(chaos.home)
    for record in records:
        run_id = record["run_id"]
        assert record.get("completed"), record
        rows = journal.steps(run_id)
        assert {row.step_id: row.status for row in rows} == dict.fromkeys(STEPS, "completed")
        writes = _writes(chaos.home, run_id)
        # Exactly one write each: a second would be a write repeated without
        # the operator's word (the operator retried only absent writes).
        for step in NON_IDEMPOTENT:
            assert writes[step] == 1, (step, record)
        for step in IDEMPOTENT:
            assert writes[step] >= 1, (step, record)
        # A step once journaled completed stays so, and never runs again.
        final = {"writes": writes, "statuses": dict.fromkeys(STEPS, "completed")}
        snapshots = [*record["snapshots"], final]
        for index, snapshot in enumerate(record["snapshots"]):
            for step, status in snapshot["statuses"].items():
                if status == "completed":
                    for later in snapshots[index + 1 :]:
                        assert later["statuses"][step] == "completed", (step, record)
                        assert later["writes"][step] == snapshot["writes"][step], (step, record)
        # The outputs are the local executor's, accepted steps included.
        assert {row.step_id: row.result["outputs"] for row in rows} == local["outputs"]
        assert json.loads((record["out"] / "done.json").read_text()) == local["done"]
        # The launch that recorded the run: the last one that was no resume.
        created = [step for step in record["steps"] if "resume" not in step["options"]][-1]
        audit = _audit(chaos.home, run_id, record["out"])
        _same_audit(
            local["audit"],
            audit,
            first_killed=created["result"] is None,
            start_atomic=chaos.separate_homes,  # over PostgreSQL
        )
    print(
        f"kills: {len(chaos.kills)} ({chaos.kills.count('launcher')} launcher,"
        f" {chaos.kills.count('busy worker')} busy worker)"
        f" over {len(records)} runs, {lanes} at a time, by round {rounds};",
        f"decided: {[r['decided'] for r in records]}",
        f"waited: {[r.get('waited', 0) for r in records]}",
        f"launches: {[len(r['steps']) for r in records]}",
    )
    return records
