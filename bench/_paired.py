"""Paired, alternating measurement shared by the benchmarks.

On a shared machine the load drifts over seconds, so timing all of A and then
all of B skews their ratio. Here A and B run pair by pair (A, B, A, B, ...);
each pair gives one ratio B/A, and the report is the median of each side plus
the median ratio and its spread (lowest and highest pair ratio).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv" / "bin" / "python")
RESULTS = ROOT / "bench" / ".results"


def compile_sources() -> None:
    """Compile flightdeck's sources to bytecode, as installing the wheel does.

    The package is installed editable here, so nothing compiled it; where
    PYTHONDONTWRITEBYTECODE is set (as on this machine class) no process
    writes the .pyc files either, and every command would compile the
    modules it imports from source, which no installed copy does (~20 ms of
    `validate ONE_FILE`, ~50 ms of the agent's start-up)."""
    import compileall

    compileall.compile_dir(str(ROOT / "src"), quiet=1)


compile_sources()


@dataclass(frozen=True)
class Paired:
    """Medians of A and B over pairs, and B/A per pair."""

    a: list[float]
    b: list[float]

    @property
    def ratios(self) -> list[float]:
        return [b / a for a, b in zip(self.a, self.b, strict=True) if a > 0]

    @property
    def a_median(self) -> float:
        return statistics.median(self.a)

    @property
    def b_median(self) -> float:
        return statistics.median(self.b)

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def spread(self) -> str:
        """`median (min-max)` of the pair ratios."""
        r = self.ratios
        return f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"


def paired(a: Callable[[], float], b: Callable[[], float], pairs: int) -> Paired:
    """Run `a` and `b` alternately, `pairs` times each; each returns a measure."""
    xs: list[float] = []
    ys: list[float] = []
    for i in range(pairs):
        # Alternate which side goes first, so neither always runs warm.
        if i % 2 == 0:
            xs.append(a())
            ys.append(b())
        else:
            ys.append(b())
            xs.append(a())
    return Paired(xs, ys)


def wall(cmd: list[str], **kwargs: object) -> Callable[[], float]:
    """A measure: the wall time of running `cmd` to completion."""

    def run() -> float:
        start = time.perf_counter()
        subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, **kwargs
        )  # type: ignore[call-overload]
        return time.perf_counter() - start

    return run


def python_pass() -> Callable[[], float]:
    return wall([PY, "-c", "pass"])


def machine() -> str:
    """One line naming the machine this run used."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return (
        f"{os.cpu_count()} vCPU {cpu}{mem}, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}, load average {load:.1f} at start"
    )


def save(name: str, markdown: str) -> None:
    """Keep one benchmark's markdown section for `bench/report.py` to collect."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.md").write_text(markdown.rstrip() + "\n", "utf-8")
    sys.stdout.write(markdown.rstrip() + "\n")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs"
