"""Shared by the Temporal tests and their worker processes: handler-backed
actions, the runtime both sides build, and the worker entry point.

    python -m tests.launch._temporal_support ADDRESS QUEUE HOME
    python -m tests.launch._temporal_support launch ADDRESS QUEUE HOME PLAN OUT [OPTIONS]

A launcher prints its result (or its error) as one JSON line. OPTIONS, a
JSON object: `approve` (step ids), `resume` (a run id: resume it instead of
launching PLAN) with the operator's `accept` (step -> outputs) and `retry`.

Every store lives under HOME (journal, audit, the actions' effect logs), so
the launcher in the test process and the workers read and write the same
files, as a launcher and workers sharing a data directory do.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from flightdeck.audit import SQLiteAuditSink
from flightdeck.launch import (
    ActionCall,
    HandlerInvoker,
    Journal,
    Runtime,
    SecretStore,
    StepServices,
)

LEDGER_STEP_SECONDS = 0.25


def _log(home: Path, name: str, call: ActionCall) -> int:
    """Record one call of an action by this process; return how many calls
    of this step came before it."""
    folder = home / "calls" / f"{call.run_id}.{call.step_id}"
    folder.mkdir(parents=True, exist_ok=True)
    before = len(list(folder.iterdir()))
    (folder / f"{before}-{os.getpid()}").write_text(name, "utf-8")
    return before


def handlers(home: Path) -> dict[str, Any]:
    def fetch(call: ActionCall) -> Any:
        _log(home, "fetch", call)
        n = int(call.args.get("n", 3))
        return {"series": [{"day": i, "value": n * i} for i in range(4)]}

    def big(call: ActionCall) -> Any:
        # A result larger than a batch of journal writes may be when it
        # rides with a step (`_rounds.MAX_CARRIED_BYTES`).
        return {"blob": "x" * 200_000}

    def publish(call: ActionCall) -> Any:
        _log(home, "publish", call)
        return {"id": 42, "url": f"https://tracker.example.com/{len(str(call.args))}"}

    async def hang_once(call: ActionCall) -> Any:
        # The first call of a step hangs until its process is killed; a
        # later one (on another worker) answers.
        if _log(home, "hang", call) == 0:
            await asyncio.sleep(3600)
        return {"ok": True}

    async def gate(call: ActionCall) -> Any:
        # Answers once the test opens the step's gate (a file).
        _log(home, "gate", call)
        while not (home / "gates" / call.step_id).exists():
            await asyncio.sleep(0.05)
        return {"opened": True}

    async def record(call: ActionCall) -> Any:
        # `busy/<pid>.<run>.<step>` while the call runs: which worker to
        # kill. The run too: two runs' calls of one step on one worker at
        # once would otherwise share a file, and the second unlink fail.
        busy = home / "busy" / f"{os.getpid()}.{call.run_id}.{call.step_id}"
        busy.parent.mkdir(exist_ok=True)
        busy.touch()
        try:
            return await write(call)
        finally:
            busy.unlink()

    async def write(call: ActionCall) -> Any:
        # A write to a target system: one line per write in the run's ledger
        # (the side file the kill tests count), with time around it so a
        # kill lands before, during or after it.
        await asyncio.sleep(LEDGER_STEP_SECONDS)
        ledger = home / "ledger"
        ledger.mkdir(exist_ok=True)
        fd = os.open(ledger / f"{call.run_id}.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{call.step_id}\n".encode())
        os.fsync(fd)
        os.close(fd)
        await asyncio.sleep(LEDGER_STEP_SECONDS)
        return {"receipt": {"text": call.args.get("text")}}

    def witness() -> Path:
        # The source system's own log of reads (FD_WITNESS: one folder for
        # every worker, as the target system is one), else this home.
        return Path(os.environ.get("FD_WITNESS") or home)

    def reached() -> Any:
        # A source reachable only where FD_SOURCE_TOKEN is set: the workers
        # of tests/launch/test_temporal_sources.py, never the launcher.
        secret = os.environ.get("FD_SOURCE_TOKEN")
        if not secret:
            raise PermissionError("no FD_SOURCE_TOKEN here: the source is unreachable")
        return {"region": f"eu-{secret}", "token_len": len(secret)}

    def token(call: ActionCall) -> Any:
        _log(witness(), "token", call)
        return reached()

    def token_probe(call: ActionCall) -> Any:
        # The source's credential probe: it works where the token is, and a
        # probe of the path /revoked never does.
        _log(witness(), "probe", call)
        return {"ok": bool(os.environ.get("FD_SOURCE_TOKEN")) and call.args["path"] != "/revoked"}

    async def token_hang_once(call: ActionCall) -> Any:
        # The first read hangs until its worker is killed; a later one answers.
        if _log(witness(), "token", call) == 0:
            await asyncio.sleep(3600)
        return reached()

    return {
        "src.token": token,
        "src.token.verify": token_probe,
        "src.token_hang": token_hang_once,
        "ledger.append": record,
        "ledger.put": record,
        "m.fetch": fetch,
        "m.big": big,
        "m.publish": publish,
        "m.hang": hang_once,
        "w.hang": hang_once,
        "m.gate": gate,
        "w.gate": gate,
    }


HEARTBEAT_TIMEOUT = 2.0


def journal_at(home: Path) -> Journal:
    """The journal a process with `home` uses: the PostgreSQL store when
    FLIGHTDECK_DATABASE_URL names one (every process sees the same), else
    the SQLite file in `home`."""
    return (
        Journal() if os.environ.get("FLIGHTDECK_DATABASE_URL") else Journal(home / "runs.sqlite3")
    )


def audit_at(home: Path) -> Any:
    if os.environ.get("FLIGHTDECK_DATABASE_URL"):
        from flightdeck.audit import default_sink

        return default_sink()
    return SQLiteAuditSink(home / "audit.sqlite3")


def runtime(home: Path, **changes: Any) -> Runtime:
    services = StepServices(
        HandlerInvoker(handlers(home)),
        SecretStore(env={}, path=home / "secrets.toml"),
        lambda settings: None,
    )
    return Runtime(
        services,
        journal=journal_at(home),
        audit=audit_at(home),
        **changes,
    )


def launch_main(
    address: str, queue: str, home: str, plan: str, out: str, extra: str = "{}"
) -> None:
    """A launcher process (attached) the test can kill."""
    import json

    from flightdeck.launch import (
        Approvals,
        LaunchError,
        LaunchOptions,
        ResumeDecisions,
        StepSettings,
        TemporalEngine,
        launch,
    )

    engine = TemporalEngine(address, queue, heartbeat_timeout=HEARTBEAT_TIMEOUT)
    more = json.loads(extra)
    options = LaunchOptions(
        unsigned=True,
        out_dir=Path(out),
        approvals=Approvals.build(more.get("approve", ())),
        settings=StepSettings(retry_base_delay=0.0),
        resume=more.get("resume"),
        decisions=ResumeDecisions(
            accept=more.get("accept", {}), retry=frozenset(more.get("retry", ()))
        ),
    )
    target = None if more.get("resume") else Path(plan)
    try:
        result = asyncio.run(launch(target, options, runtime(Path(home), engine=engine)))
    except LaunchError as exc:
        print(json.dumps({"error": exc.to_dict()}), flush=True)
    else:
        print(json.dumps(result.to_dict()), flush=True)
    # As the CLI does (`cli.run._temporal.skip_teardown`): no interpreter
    # teardown after the SDK's last call, which can abort the process
    # (temporalio/sdk-python#300).
    sys.stderr.flush()
    os._exit(0)


def main(address: str, queue: str, home: str) -> None:
    from datetime import timedelta

    from flightdeck.launch import run_worker

    ready = asyncio.Event()

    async def serve() -> None:
        serving = asyncio.ensure_future(
            run_worker(
                address,
                queue,
                runtime(Path(home)),
                ready=ready,
                sticky_timeout=timedelta(seconds=1),
                heartbeat_every=timedelta(seconds=0.5),
            )
        )
        await ready.wait()
        print("ready", flush=True)
        await serving

    asyncio.run(serve())


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        launch_main(*sys.argv[2:8])
    else:
        main(*sys.argv[1:4])
