"""Benchmark: the launch runtime's own overhead.

1. A 1,000-step transform DAG (a chain of `identity` steps fanning into
   layers of 10, so both dependencies and concurrency are exercised): wall
   time of the whole walk divided by the steps = runtime overhead per step
   (the transforms themselves do nothing). Target: < 1 ms at the median.
   Measured twice: as a long-lived process launches a plan again (parse,
   schema and lint from the in-process cache), and as the plan's first
   launch in a process (the cache cleared before each run, as in the CLI).
2. 100 independent action calls each waiting 50 ms (async handler,
   `--max-parallel 100`): wall time. Target: < 0.5 s (close to one call).
3. The egress hook's cost when no policy is active: `sys.audit` events
   with no hook, then with the process-wide hook installed (no guard).

Both run through the real path: plan read, inputs, scheduler, local
executor, trust contract (for 2), SQLite journal written per step, audit.
Medians of 5 runs. Run with `make bench` or `python bench/launch.py`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from flightdeck.audit import MemoryAuditSink
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

RUNS = 5
STEPS = 1000
WIDTH = 10
CALLS = 100
WAIT = 0.05
ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"


def _write(folder: Path, block: dict[str, Any]) -> Path:
    data = {"name": "bench-plan", "description": "Benchmark plan.", "aileron": block}
    path = folder / "SKILL.md"
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n", "utf-8")
    return path


def dag_plan(folder: Path) -> Path:
    steps: list[dict[str, Any]] = [
        {"id": "s0", "kind": "transform", "bindings": {"x": "inputs.seed"}, "outputs": ["v"]}
    ]
    for index in range(1, STEPS):
        parent = max(0, ((index - 1) // WIDTH) * WIDTH)  # layers of WIDTH share a parent
        steps.append(
            {
                "id": f"s{index}",
                "kind": "transform",
                "bindings": {"x": f"steps.s{parent}.v"},
                "outputs": ["v"],
            }
        )
    seed = {"name": "seed", "type": "number", "resolution": {"rule": "literal", "default": 1}}
    return _write(folder, {"inputs": [seed], "outputs": [], "steps": steps})


def calls_plan(folder: Path) -> Path:
    contract = {
        "credential": {"kind": "none"},
        "hosts": ["example.com"],
        "effect": "read",
        "idempotency": {"safeToRetry": True},
        "audit": {"fields": ["approved-input", "operation-effect", "result"]},
    }
    steps = [
        {"id": f"c{i}", "kind": "action-call", "actionRef": "aileron:svc.wait", "outputs": ["v"]}
        for i in range(CALLS)
    ]
    block = {
        "requires": {"actions": [{"ref": "aileron:svc.wait", "trustContract": contract}]},
        "inputs": [],
        "outputs": [],
        "steps": steps,
    }
    return _write(folder, block)


async def _wait(call: ActionCall) -> dict[str, Any]:
    await asyncio.sleep(WAIT)
    return {"v": call.step_id}


def run_once(plan: Path, folder: Path, max_parallel: int, *, fresh: bool = False) -> float:
    # One journal file per case, kept across runs like a user's runs.sqlite3
    # (creating the file and its tables is a first-launch cost only). The
    # process remembers a plan's parse, schema and lint by its bytes
    # (flightplan/_parsed.py); `fresh` forgets them first, as in a CLI launch.
    if fresh:
        from flightdeck.flightplan._parsed import clear

        clear()
    runtime = Runtime(
        StepServices(HandlerInvoker({"svc.wait": _wait}), SecretStore(env={})),
        journal=Journal(folder / f"runs-{plan.parent.name}.sqlite3"),
        audit=MemoryAuditSink(),
    )
    options = LaunchOptions(
        unsigned=True,
        out_dir=folder / "out",
        approvals=Approvals(),
        max_parallel=max_parallel,
        settings=StepSettings(),
    )
    started = time.perf_counter()
    result = asyncio.run(launch(plan, options, runtime))
    elapsed = time.perf_counter() - started
    runtime.journal.close()
    assert result.status == "completed", result.error
    return elapsed


def hook_cost_ns() -> tuple[float, float]:
    """Per-event cost of `sys.audit` before and after the egress hook exists."""
    from flightdeck.guard import install

    def per_event() -> float:
        count = 200_000
        started = time.perf_counter_ns()
        for _ in range(count):
            sys.audit("flightdeck.bench")
        return (time.perf_counter_ns() - started) / count

    before = statistics.median(per_event() for _ in range(RUNS))
    install()
    after = statistics.median(per_event() for _ in range(RUNS))
    return before, after


def bare_walk() -> float:
    """The same 1,000-step graph walked by plain asyncio: one task per step
    awaiting its parent's future, at most 8 running, each computing its value."""

    async def walk() -> None:
        loop = asyncio.get_running_loop()
        gate = asyncio.Semaphore(8)
        done: dict[int, asyncio.Future[int]] = {i: loop.create_future() for i in range(STEPS)}

        async def step(index: int) -> None:
            x = 1 if index == 0 else await done[max(0, ((index - 1) // WIDTH) * WIDTH)]
            async with gate:
                done[index].set_result({"v": x}["v"])

        await asyncio.gather(*(step(i) for i in range(STEPS)))

    started = time.perf_counter()
    asyncio.run(walk())
    return time.perf_counter() - started


def main() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from _paired import paired, save

    hook_before, hook_after = hook_cost_ns()
    os.environ.setdefault("FLIGHTDECK_HOME", tempfile.mkdtemp(prefix="fd-bench-"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "dag").mkdir()
        (folder / "calls").mkdir()
        dag = dag_plan(folder / "dag")
        calls = calls_plan(folder / "calls")
        walk = paired(bare_walk, lambda: run_once(dag, folder, 8), RUNS)
        first = paired(bare_walk, lambda: run_once(dag, folder, 8, fresh=True), RUNS)
        fan = paired(lambda: WAIT, lambda: run_once(calls, folder, CALLS), RUNS)
    rows = [
        (
            "1,000-step transform DAG, per step: launch (whole run / steps) vs bare asyncio walk",
            f"{walk.b_median / STEPS * 1000:.3f} ms vs {walk.a_median / STEPS * 1000:.4f} ms",
            walk.spread(),
            "<= 5x",
        ),
        (
            "the same, the plan's first launch in the process (parse cache cleared, as a CLI"
            " launch)",
            f"{first.b_median / STEPS * 1000:.3f} ms vs {first.a_median / STEPS * 1000:.4f} ms",
            first.spread(),
            "",
        ),
        (
            f"{CALLS} parallel action calls x {int(WAIT * 1000)} ms: wall vs critical path",
            f"{fan.b_median * 1000:.0f} ms vs {WAIT * 1000:.0f} ms",
            fan.spread(),
            "<= 1.2x",
        ),
        ("audit event, no hook installed", f"{hook_before:.0f} ns", "", ""),
        ("audit event, egress hook installed, no guard active", f"{hook_after:.0f} ns", "", ""),
    ]
    lines = [
        "## launch (`bench/launch.py`)",
        "",
        "The launch runtime through its real path (unsigned plan read + schema + lint, from the"
        " process's parse cache after the first run unless the row says otherwise, inputs,"
        " scheduler, local asyncio executor, SQLite journal (one file per case, kept across runs),"
        " in-memory audit), paired with the"
        f" baseline run by run ({RUNS} alternating pairs).",
        "",
        "| case | medians | ratio (lowest-highest pair) | target |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
    ]
    save("launch", "\n".join(lines))


if __name__ == "__main__":
    main()
