"""Benchmark: `agent --acp` start-up to its `initialize` response, paired with
`agent --json-stream` start-up to its `ready` line.

    .venv/bin/python bench/acp_startup.py [PAIRS]

Each side is a fresh process; pairs alternate which runs first, so both see
the same load. Target (issue 18): ACP within 1.2x of the JSON stream. The
`import acp` row says where the difference goes: the library's import, timed
in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from _paired import PY, ROOT, machine, ms, paired, save

FD = str(ROOT / ".venv" / "bin" / "flightdeck")
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'


def first_line(
    args: list[str], send: bytes, expect: bytes, env: dict[str, str]
) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [FD, "agent", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        if send:
            proc.stdin.write(send)
            proc.stdin.flush()
        line = proc.stdout.readline()
        took = time.perf_counter() - start
        proc.stdin.close()
        proc.wait()
        assert expect in line, line
        return took

    return run


def import_acp() -> float:
    code = "import time; t = time.perf_counter(); import acp; print(time.perf_counter() - t)"
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "FLIGHTDECK_HOME": home, "ANTHROPIC_API_KEY": "test"}
        ready = first_line(["--json-stream"], b"", b'"ready"', env)
        initialize = first_line(["--acp"], INITIALIZE, b'"protocolVersion"', env)
        result = paired(ready, initialize, pairs)
        imports = sorted(import_acp() for _ in range(5))[2]
    lines = [
        "## ACP start-up (`bench/acp_startup.py`)",
        "",
        f"{pairs} alternating pairs; ratio = median of the per-pair ratios (lowest-highest pair).",
        "",
        "| what | median | ratio to the JSON stream | target |",
        "|---|---|---|---|",
        f"| `agent --json-stream`: spawn to `ready` | {ms(result.a_median)} | — | — |",
        f"| `agent --acp`: spawn to the `initialize` response | {ms(result.b_median)} "
        f"| {result.spread()} | <= 1.2x |",
        f"| `import acp` alone, fresh interpreter (median of 5) | {ms(imports)} | — | — |",
        "",
        f"Machine: {machine()}.",
    ]
    save("acp_startup", "\n".join(lines))


if __name__ == "__main__":
    main()
