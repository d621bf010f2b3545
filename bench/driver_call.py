"""Benchmark: per-call overhead of a tool call through an SDK driver.

One process, one event loop. A temporary workspace holds a TOOL (`math.add`,
inputs {a, b} integers, output integer) and a `package_manager: local` driver
over a module with a trivial function. Timed, in alternating rounds:

- direct:      `await add(a=1, b=2)["sum"]` (async) / `add_sync(a=1, b=2)["sum"]` (sync)
- call_tool:   `await call_tool("math.add", {"a": 1, "b": 2}, driver=d)`: input schema,
               args_template, call, `result_extract: $.sum`, output schema
- sync path:   the same pipeline for a sync function in the calling thread
               (`check_input` + `SdkDriver.invoke_sync` + `check_output`)
- to_thread:   call_tool over the sync function (which runs via asyncio.to_thread)

Each round times a batch of calls of every path in turn (in reverse order every
other round, so no path always runs right after the same neighbour); the
per-call figure of a round is the batch time divided by its size. Reported:
the median per call over rounds, and against each path's baseline the median
over rounds of that round's overhead (path - direct) or ratio (thread path /
bare `to_thread`), with the lowest and highest round.
Targets (issue 14): overhead <= 15 us for call_tool over an async function,
<= 5 us for the sync pipeline in the calling thread, thread path <= 2x bare.
Run: `.venv/bin/python bench/driver_call.py` (or `make bench`).
`--stages` prints instead the sync pipeline cut into its stages, each timed
alone (median ns per call over rounds), and a cProfile of the whole, to see
where a change should go; nothing is saved.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml

from flightdeck.drivers import SdkDriver, call_tool, load_driver
from flightdeck.drivers._seam import check_input, check_output

ROOT = Path(__file__).resolve().parent.parent
BATCH = 2000
ROUNDS = 15

MODULE = """
async def add(a, b):
    return {"sum": a + b}


def add_sync(a, b):
    return {"sum": a + b}
"""

TOOL = {
    "name": "Add",
    "id": "math.add",
    "description": "Add two integers.",
    "version": "1.0.0",
    "inputs": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    "outputs": {"type": "integer"},
}


def driver_doc(ident: str, ref: str) -> dict[str, Any]:
    return {
        "name": "Bench",
        "id": ident,
        "description": "Benchmark driver.",
        "version": "1.0.0",
        "kind": "sdk",
        "package": "benchmod",
        "package_manager": "local",
        "install": [{"method": "vendored", "path": "../../pkgs/benchmod"}],
        "implements": [
            {
                "tool": "math.add",
                "version": "^1.0.0",
                "metadata": {
                    "sdk": {
                        "function_ref": ref,
                        "args_template": {"a": "${input.a}", "b": "${input.b}"},
                        "result_extract": "$.sum",
                    }
                },
            }
        ],
    }


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def setup(ws: Path) -> tuple[SdkDriver, SdkDriver]:
    write(ws / ".tools" / "math-add" / "TOOL.md", "---\n" + yaml.safe_dump(TOOL) + "---\n")
    write(ws / "pkgs" / "benchmod" / "__init__.py", MODULE)
    out = []
    for ident, ref in (("bench-async", "add"), ("bench-sync", "add_sync")):
        doc = "---\n" + yaml.safe_dump(driver_doc(ident, ref)) + "---\n"
        write(ws / ".drivers" / ident / "DRIVER.md", doc)
        out.append(load_driver(ws / ".drivers" / ident))
    return out[0], out[1]


async def per_call(fn: Callable[[], Awaitable[Any]], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        await fn()
    return (time.perf_counter() - start) / n * 1e6


async def measure(fast: SdkDriver, slow: SdkDriver) -> dict[str, list[float]]:
    module: Any = fast.import_report.module  # type: ignore[union-attr]
    add, add_sync = module.add, module.add_sync
    value = {"a": 1, "b": 2}
    binding = slow.binding("math.add")
    assert binding is not None

    async def direct() -> Any:
        return (await add(a=1, b=2))["sum"]

    async def direct_sync() -> Any:
        return add_sync(a=1, b=2)["sum"]

    async def through() -> Any:
        return (await call_tool("math.add", value, driver=fast)).output

    async def sync_path() -> Any:
        check_input(binding, value)
        out = slow.invoke_sync("math.add", value, {})
        check_output(binding, out)
        return out

    async def to_thread() -> Any:
        return (await call_tool("math.add", value, driver=slow)).output

    async def bare_thread() -> Any:
        return (await asyncio.to_thread(add_sync, a=1, b=2))["sum"]

    paths = {
        "direct": direct,
        "direct_sync": direct_sync,
        "call_tool": through,
        "sync_path": sync_path,
        "to_thread": to_thread,
        "bare_thread": bare_thread,
    }
    assert await through() == 3 and await sync_path() == 3 and await to_thread() == 3
    results: dict[str, list[float]] = {k: [] for k in paths}
    for fn in paths.values():  # warm-up
        await per_call(fn, 200)
    for i in range(ROUNDS):
        for name, fn in list(paths.items())[:: 1 if i % 2 == 0 else -1]:
            n = BATCH if name not in {"to_thread", "bare_thread"} else BATCH // 10
            results[name].append(await per_call(fn, n))
    return results


def _spread(results: dict[str, list[float]], a: str, b: str, *, ratio: bool = False) -> str:
    """`b` against its baseline `a`, round by round (each round times every path):
    the median of the per-round overhead b - a, or with `ratio` of b / a, and the
    lowest and highest round."""
    if not ratio:
        diffs = [y - x for x, y in zip(results[a], results[b], strict=True)]
        return f"{statistics.median(diffs):.1f} us ({min(diffs):.1f}-{max(diffs):.1f})"
    ratios = [y / x for x, y in zip(results[a], results[b], strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def stages(slow: SdkDriver) -> None:
    """Each stage of the sync pipeline timed alone, then the whole under cProfile."""
    import cProfile
    import pstats

    from flightdeck.drivers._plain import to_plain
    from flightdeck.guard import enter, leave

    binding, sdk = slow.binding("math.add"), slow.bindings["math.add"]
    assert binding is not None and sdk.args is not None
    value, context, result = {"a": 1, "b": 2}, {}, {"sum": 3}
    scope = {"input": value, "secrets": {}, "context": context}
    slow.invoke_sync("math.add", value, context)  # builds the egress template
    assert slow._egress_template is not None
    stamp, render, function = slow._egress_template[2], sdk.args.render, sdk.ref.function
    layer = stamp()

    def whole() -> None:
        check_input(binding, value)
        check_output(binding, slow.invoke_sync("math.add", value, context))

    parts: dict[str, Callable[[], Any]] = {
        "whole pipeline": whole,
        "check_input": lambda: check_input(binding, value),
        "args_template render": lambda: render(scope),
        "stamp the egress layer": stamp,
        "enter + leave the layer": lambda: leave(enter(layer)),
        "the function itself": lambda: function(a=1, b=2),
        "to_plain": lambda: to_plain(result),
        "result_extract": lambda: sdk.extract.apply(result),
        "check_output": lambda: check_output(binding, 3),
        "(an empty lambda)": lambda: None,
    }
    times: dict[str, list[float]] = {name: [] for name in parts}
    for _ in range(ROUNDS):
        for name, fn in parts.items():
            start = time.perf_counter_ns()
            for _ in range(BATCH):
                fn()
            times[name].append((time.perf_counter_ns() - start) / BATCH)
    for name, got in times.items():
        print(f"{name:28s} {statistics.median(got):8.0f} ns")
    profile = cProfile.Profile()
    profile.runcall(lambda: [whole() for _ in range(50_000)])
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)


def main() -> None:
    if "--stages" in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            stages(setup(Path(tmp))[1])
        return
    with tempfile.TemporaryDirectory() as tmp:
        fast, slow = setup(Path(tmp))
        results = asyncio.run(measure(fast, slow))
    med = {k: statistics.median(v) for k, v in results.items()}
    rows = [
        ("direct call (async function)", med["direct"], "", ""),
        (
            "call_tool, async function",
            med["call_tool"],
            _spread(results, "direct", "call_tool") + " overhead",
            "<= 15 us",
        ),
        ("direct call (sync function)", med["direct_sync"], "", ""),
        (
            "sync pipeline in the calling thread",
            med["sync_path"],
            _spread(results, "direct_sync", "sync_path") + " overhead",
            "<= 5 us",
        ),
        ("bare `asyncio.to_thread` of the sync function", med["bare_thread"], "", ""),
        (
            "call_tool, sync function via asyncio.to_thread",
            med["to_thread"],
            _spread(results, "bare_thread", "to_thread", ratio=True) + " of bare",
            "<= 2x bare",
        ),
    ]
    lines = [
        "## driver call (`bench/driver_call.py`)",
        "",
        "Per-call cost of a tool call through an in-process SDK driver (input schema,"
        " args_template, call, `result_extract`, output schema) against the trivial function"
        f" called directly, one process; {ROUNDS} rounds, each timing every path in turn"
        f" ({BATCH} calls, {BATCH // 10} for the thread paths; the order reversed every other"
        " round); medians over rounds, and the median per-round overhead or ratio with its"
        " lowest-highest round.",
        "",
        "| path | per call (median) | against its baseline | target |",
        "|---|---|---|---|",
    ]
    for label, value, against, target in rows:
        lines.append(f"| {label} | {value:.1f} us | {against} | {target} |")
    sys.path.insert(0, str(ROOT / "bench"))
    from _paired import save

    save("driver_call", "\n".join(lines))


if __name__ == "__main__":
    main()
