"""A small mutation pass (not run in CI).

    .venv/bin/python scripts/mutate.py src/flightdeck/flightplan/_trust.py \
        tests/flightplan/test_trust_chain.py [more test files...]

Applies one mutant at a time to the module (a flipped comparison, a dropped
`not`, a `raise` replaced by `pass`, `and`/`or` swapped), runs the given
tests with -x, restores the file, and reports killed/total and the survivors.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

_SWAPS = (
    (re.compile(r" != "), " == "),
    (re.compile(r" == "), " != "),
    (re.compile(r" < "), " >= "),
    (re.compile(r"\bnot "), ""),
    (re.compile(r" and "), " or "),
    (re.compile(r" or "), " and "),
    (re.compile(r"^(\s*)raise "), r"\1pass  # "),
    (re.compile(r"^(\s*)return TrustDecision"), r"\1pass  # "),
)


def mutants(lines: list[str]) -> list[tuple[int, str]]:
    out = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("#", '"', "def ", "class ", "import ", "from ")):
            continue
        for pattern, replacement in _SWAPS:
            if pattern.search(line):
                mutated = pattern.sub(replacement, line, count=1)
                if mutated != line and not mutated.rstrip().endswith("# ("):
                    out.append((number, mutated))
    return out


def main(module: str, *tests: str) -> int:
    path = Path(module)
    original = path.read_text()
    lines = original.splitlines(keepends=True)
    survivors, killed = [], 0
    found = mutants(lines)
    try:
        for number, mutated in found:
            path.write_text("".join([*lines[:number], mutated, *lines[number + 1 :]]))
            run = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                capture_output=True,
                check=False,
            )
            if run.returncode == 0:
                survivors.append(f"{module}:{number + 1}: {mutated.strip()}")
            else:
                killed += 1
    finally:
        path.write_text(original)
    print(f"killed {killed}/{len(found)}")
    print("\n".join(survivors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
