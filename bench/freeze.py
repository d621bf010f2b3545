"""Benchmark: freeze + verify of a generated 500-step Flight Plan.

Run: .venv/bin/python bench/freeze.py [STEPS] [ROUNDS]
Freeze = load + schema + lint + lock + canonical bytes + hash + sign + YAML
emit and round-trip check + store; verify = load + hash + signature +
keyring + schema + lint. Each round uses a fresh FLIGHTDECK_HOME.
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

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

from flightdeck.flightplan import Keyring, freeze_plan, generate_keys, verify_plan  # noqa: E402


def plan(steps: int) -> dict[str, Any]:
    contract = {
        "credential": {"kind": "none"},
        "hosts": ["api.example.com"],
        "effect": "read",
        "idempotency": {"safeToRetry": True},
        "audit": {"fields": ["result"]},
    }
    items: list[dict[str, Any]] = [
        {
            "id": "s0",
            "kind": "action-call",
            "actionRef": "aileron:metrics.query_series",
            "args": {"window": "inputs.window_days"},
            "outputs": ["out"],
        }
    ]
    for index in range(1, steps):
        # A layered DAG: each step reads one or two earlier steps.
        bindings = {"a": f"steps.s{index - 1}.out"}
        if index > 2:
            bindings["b"] = f"steps.s{index // 2}.out"
        items.append(
            {"id": f"s{index}", "kind": "transform", "bindings": bindings, "outputs": ["out"]}
        )
    items[-1]["materializesOutput"] = "result.json"
    return {
        "name": "bench-plan",
        "description": f"A generated {steps}-step plan.",
        "aileron": {
            "schemaVersion": "aileron.flightplan.v1",
            "requires": {
                "actions": [{"ref": "aileron:metrics.query_series", "trustContract": contract}]
            },
            "inputs": [
                {"name": "window_days", "type": "number", "resolution": {"rule": "literal"}}
            ],
            "outputs": [
                {
                    "name": "result.json",
                    "mimeType": "application/json",
                    "encoding": "utf-8",
                    "publish": {"target": "file", "path": "result.json"},
                }
            ],
            "steps": items,
        },
    }


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    freeze_times, verify_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = root / "SKILL.md"
        source.write_text(f"---\n{json.dumps(plan(steps), indent=1)}\n---\n# Bench\n")
        keys = generate_keys(root / "keys")
        for index in range(rounds):
            os.environ["FLIGHTDECK_HOME"] = str(root / f"home{index}")
            started = time.perf_counter()
            outcome = freeze_plan(source, signing_key=keys.private_path, publisher="github://bench")
            freeze_times.append(time.perf_counter() - started)
            Keyring().trust("github://bench", keys.public_path.read_bytes())
            started = time.perf_counter()
            verify_plan("bench-plan")
            verify_times.append(time.perf_counter() - started)
        size = outcome.stored.skill_path.stat().st_size
    print(f"steps={steps} rounds={rounds} frozen SKILL.md={size} bytes")
    print(
        f"freeze median {statistics.median(freeze_times) * 1000:.1f} ms "
        f"(min {min(freeze_times) * 1000:.1f} ms)"
    )
    print(
        f"verify median {statistics.median(verify_times) * 1000:.1f} ms "
        f"(min {min(verify_times) * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
