"""Benchmark: action resolution + narrowing, and the file-contract host.

Run: .venv/bin/python bench/actions_io.py [RUNS]
  * resolve: the 10 standard actions by registry address (cold = fresh
    process-wide cache miss per file, warm = content-hash cache hit);
  * narrowing: check_narrowing of one implementor against storage:push;
  * host: RUNS file-contract runs (1 staged 64 KiB input, 1 synced output),
    with a memory audit sink and with the default SQLite sink.
Prints one JSON object of medians.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from flightdeck.actions import ActionResolver, check_narrowing  # noqa: E402
from flightdeck.actions import _load as action_cache  # noqa: E402
from flightdeck.audit import MemoryAuditSink, default_sink  # noqa: E402
from flightdeck.io import define_io, run_with_file_contract  # noqa: E402

STANDARD = ROOT / "tests" / "data" / "corpus" / "libraries" / "standard"
SLUGS = sorted(p.name for p in (STANDARD / ".actions").iterdir())


def _time(fn: Any, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def resolve_all(cold: bool) -> None:
    if cold:
        action_cache._CACHE.clear()
    resolver = ActionResolver(libraries=[STANDARD])
    for slug in SLUGS:
        resolver.resolve(f"@agentik/actions-standard/{slug}", base_dir=ROOT)


def host_runs(runs: int, audit: Any, ws: Path) -> None:
    io = define_io(
        {
            "inputs": {"type": "object"},
            "inputsFiles": {"src": {"path": "in.bin"}},
            "outputsFiles": {"out": {"path": "out/<runId>.bin"}},
        }
    )

    def body(value: dict[str, Any]) -> None:
        root = Path(value["_workflowFsRoot"])
        (root / "out").write_bytes((root / "src").read_bytes())

    for i in range(runs):
        run_with_file_contract(
            io, body, {}, workspace=ws, unit_id="bench", run_id=f"r{i}", audit=audit
        )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FLIGHTDECK_HOME"] = str(Path(tmp) / "home")
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "in.bin").write_bytes(os.urandom(64 * 1024))
        resolver = ActionResolver(libraries=[STANDARD])
        push = resolver.resolve("@agentik/actions-standard/storage-push", base_dir=ROOT).action
        view = {"mutates": ["storage:*", "network:*"], "approval": "always", "risk_level": 2}
        narrowing = _time(lambda: [check_narrowing(view, push) for _ in range(1000)], 5) / 1000
        result = {
            "resolve_10_cold_ms": _time(lambda: resolve_all(True), 5) * 1000,
            "resolve_10_warm_ms": _time(lambda: resolve_all(False), 5) * 1000,
            "check_narrowing_us": narrowing * 1e6,
            "host_run_memory_audit_ms": _time(lambda: host_runs(runs, MemoryAuditSink(), ws), 3)
            * 1000
            / runs,
            "host_run_sqlite_audit_ms": _time(lambda: host_runs(runs, default_sink(), ws), 3)
            * 1000
            / runs,
            "runs": runs,
        }
    print(json.dumps({k: round(v, 3) for k, v in result.items()}, indent=2))


if __name__ == "__main__":
    main()
