"""Benchmark: importing a pinned installed distribution, paired and alternating.

    .venv/bin/python bench/pinned_import.py [PAIRS]

A launch imports a pinned pip driver from the source files its code pin just
checked (drivers/_source_import.py), never from bytecode. Each side is a
whole process: the baseline is the ordinary `import` (the distribution's
installed bytecode); the other digests the RECORD's files as launch does and
imports through the checked-source finder, first with an empty code cache
(every module compiled), then with the cache the first run left.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable

from _paired import PY, machine, ms, paired, save, wall

PROBE = """
import sys
from flightdeck.drivers._digest import _Hasher, distribution_files
from flightdeck.drivers._source_import import claim
hasher = _Hasher()
distribution_files(sys.argv[1], hasher)
claim(sys.argv[2], [sys.argv[2]], hasher.sources, whole=False)
__import__(sys.argv[2])
"""

DISTRIBUTIONS = [("openai", "openai"), ("anthropic", "anthropic")]


def _fresh_home_each_time(probe: list[str], env: dict[str, str], base: str) -> Callable[[], float]:
    """A fresh home per run: nothing kept, every module compiled."""

    def run() -> float:
        return wall(probe, env={**env, "FLIGHTDECK_HOME": base + os.urandom(4).hex()})()

    return run


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rows = []
    for dist, module in DISTRIBUTIONS:
        plain = wall([PY, "-c", f"import {module}"])
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "FLIGHTDECK_HOME": home}
            probe = [PY, "-c", PROBE, dist, module]
            cold_home = os.path.join(home, "cold")

            cold = _fresh_home_each_time(probe, env, cold_home)
            wall(probe, env=env)()  # fill the cache once
            warm = wall(probe, env=env)
            cold_result = paired(plain, cold, pairs)
            warm_result = paired(plain, warm, pairs)
        rows.append(
            f"| {dist} | {ms(cold_result.a_median)} | {ms(cold_result.b_median)} "
            f"| {cold_result.spread()} | {ms(warm_result.b_median)} | {warm_result.spread()} |"
        )
    save(
        "pinned_import",
        "## Pinned distribution import\n\n"
        f"{machine()}; {pairs} alternating pairs per column, medians.\n\n"
        "| distribution | plain `import` | pinned, no code cache | ratio | pinned, code cached "
        "| ratio |\n|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n",
    )


if __name__ == "__main__":
    main()
