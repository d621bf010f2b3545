"""A kill -9 campaign against `flightdeck launch`, run as its own process:

    python -m tests.launch._crash_campaign CONFIG.json > REPORT.json

Each launch or resume is a child forked from this process after flightdeck
is imported, running the same CLI entry point as the `flightdeck` command;
forking saves the ~1 s interpreter start per kill, so 30+ kills fit in a
few seconds. A child is killed with SIGKILL either after a seeded random
delay (anywhere: start-up, journal writes, between steps) or by the test
driver package itself right before or after a step's write (`KILL_AT`),
so the worst points are always among them.

The operator is simulated: when a resume reports `resume.in_doubt` for a
step, it checks the target system (the writes file) and decides
`--accept STEP=OUTPUTS` if the write is there, else `--retry STEP`; after a
crash it asks again instead of repeating its last decision.
Everything observed goes into the report; the test asserts on it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import flightdeck.cli.run.launch
import flightdeck.cli.run.runs
import flightdeck.drivers
from flightdeck.cli import main

# Imported before forking, so a child starts in milliseconds.
_WARM = (flightdeck.cli.run.launch, flightdeck.cli.run.runs, flightdeck.drivers)

STEPS = ("w1", "i1", "w2", "i2")


def _child(args: list[str], env: dict[str, str], out: int, err: int) -> None:
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.environ.update(env)
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 99
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _wait(pid: int, kill_at: float | None) -> int:
    """The child's wait status; SIGKILL it at `kill_at` if still running."""
    while kill_at is not None and time.monotonic() < kill_at:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.002)
    if kill_at is not None:
        os.kill(pid, signal.SIGKILL)  # a zombie until reaped, so never ESRCH
    return os.waitpid(pid, 0)[1]


def fork_run(
    args: list[str], env: dict[str, str], kill_after: float | None, scratch: Path
) -> dict[str, Any]:
    """Run the CLI in a forked child; SIGKILL it after `kill_after` seconds."""
    out_path, err_path = scratch / "out", scratch / "err"
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        pid = os.fork()
        if pid == 0:
            _child(args, env, out.fileno(), err.fileno())
        status = _wait(pid, None if kill_after is None else started + kill_after)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return {
        "args": args,
        "killed": killed,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "stdout": out_path.read_text(errors="replace"),
        "stderr": err_path.read_text(errors="replace"),
        "seconds": time.monotonic() - started,
    }


def _writes(ledger: Path) -> dict[str, int]:
    path = ledger / "writes.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return {step: lines.count(step) for step in STEPS}


def _run_ids(scratch: Path) -> set[str]:
    listed = fork_run(["runs", "list", "--format", "json"], {}, None, scratch)
    return {str(item["run_id"]) for item in json.loads(listed["stdout"] or "[]")}


def _statuses(run_id: str, scratch: Path) -> dict[str, str]:
    shown = fork_run(["runs", "show", run_id, "--format", "json"], {}, None, scratch)
    return {s["id"]: s["status"] for s in json.loads(shown["stdout"])["steps"]}


def campaign(config: dict[str, Any]) -> list[dict[str, Any]]:
    rng = random.Random(config["seed"])
    scratch = Path(config["scratch"])
    scratch.mkdir(parents=True, exist_ok=True)
    base = ["--workspace", config["workspace"], "--approve", "all", "--format", "json"]
    campaigns: list[dict[str, Any]] = []
    kills = 0
    while kills < config["kills"]:
        ledger = scratch / f"campaign-{len(campaigns)}"
        ledger.mkdir()
        env = {"LEDGER_DIR": str(ledger), "STEP_SECONDS": str(config["step_seconds"])}
        record: dict[str, Any] = {"ledger": str(ledger), "processes": [], "snapshots": []}
        campaigns.append(record)
        run_id: str | None = None
        decision: list[str] = []
        while len(record["processes"]) < config["max_processes"]:
            if run_id is None:
                before = _run_ids(scratch)
                args = ["launch", config["plan"], "--unsigned", "--out-dir", str(ledger / "out")]
            else:
                args = ["launch", "--resume", run_id, *decision]
            # A first launch is always killed; a resume may also run to its end.
            mode = rng.choice(("delay", "delay", "write", *(("none",) if run_id else ())))
            kill_env = dict(env)
            delay = None
            if mode == "delay":
                delay = rng.uniform(0, config["run_seconds"])
            elif mode == "write":
                kill_env["KILL_AT"] = f"{rng.choice(STEPS)}:{rng.choice(('before', 'after'))}"
            done = fork_run([*args, *base], kill_env, delay, scratch)
            done.update(mode=mode, kill_at=kill_env.get("KILL_AT"), delay=delay)
            record["processes"].append(done)
            if run_id is None:
                new = _run_ids(scratch) - before
                run_id = new.pop() if new else None
            if done["killed"]:
                kills += 1
                # A careful operator does not repeat a decision blindly after a
                # crash: the next resume says again what is in doubt, if anything.
                decision = []
            else:
                report = json.loads(done["stdout"] or "{}")
                error = report.get("error") or {}
                if report.get("status") == "completed":
                    decision = []
                elif error.get("code") == "resume.in_doubt":
                    step = error["step"]
                    done["decided"] = step
                    if _writes(ledger)[step]:  # the operator looks at the target system
                        outputs = json.dumps({"receipt": {"text": step}})
                        decision = ["--accept", f"{step}={outputs}"]
                    else:
                        decision = ["--retry", step]
                else:
                    decision = []
            if run_id is not None:
                record["snapshots"].append(
                    {"writes": _writes(ledger), "statuses": _statuses(run_id, scratch)}
                )
                if (
                    not done["killed"]
                    and json.loads(done["stdout"] or "{}").get("status") == "completed"
                ):
                    record["completed"] = True
                    break
        record["run_id"] = run_id
    return campaigns


if __name__ == "__main__":
    settings = json.loads(Path(sys.argv[1]).read_text())
    json.dump(campaign(settings), sys.stdout)
