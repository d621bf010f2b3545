"""Benchmark: command start-up against `python -c pass`, paired and alternating.

    .venv/bin/python bench/cli_startup.py [PAIRS]

Each command is a whole process; each pair runs `python -c pass` and the
command back to back (order alternating), so both see the same load. Targets
(issue 14): `--version` <= 3x, `validate ONE_FILE` <= 10x.
"""

from __future__ import annotations

import os
import sys
import tempfile

from _paired import PY, ROOT, machine, ms, paired, python_pass, save, wall

FD = str(ROOT / ".venv" / "bin" / "flightdeck")
ONE_FILE = str(ROOT / "examples" / "workspace" / ".actions" / "notes-append" / "ACTION.md")

COMMANDS: list[tuple[str, list[str], str]] = [
    ("`flightdeck --version`", ["--version"], "<= 3x"),
    ("`flightdeck validate ONE_FILE`", ["validate", ONE_FILE], "<= 10x"),
    ("`flightdeck runs list`", ["runs", "list"], ""),
    ("`flightdeck schema action`", ["schema", "action"], ""),
]


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "FLIGHTDECK_HOME": home}
        rows = []
        base = []
        for name, args, target in COMMANDS:
            result = paired(python_pass(), wall([FD, *args], env=env), pairs)
            base.extend(result.a)
            rows.append(
                f"| {name} | {ms(result.b_median)} | {ms(result.a_median)} "
                f"| {result.spread()} | {target} |"
            )
    import statistics

    lines = [
        "## command start-up (`bench/cli_startup.py`)",
        "",
        f"Each command as a whole process next to `python -c pass` ({PY.rsplit('/', 1)[-1]}, "
        f"median {ms(statistics.median(base))} in this run), {pairs} alternating pairs per row; "
        "ratio = median of the per-pair ratios (lowest-highest pair).",
        "",
        "| command | median | `python -c pass` | ratio | target |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"Machine: {machine()}.",
    ]
    save("cli_startup", "\n".join(lines))


if __name__ == "__main__":
    main()
