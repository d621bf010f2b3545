"""Benchmark: validate in process, and what an invalid document costs.

    .venv/bin/python bench/validate_inprocess.py [PAIRS]

- frontmatter parse: MiB per CPU-second of YAML frontmatter composed into
  data and source maps (`_yaml.compose`, as `parse_document` calls it) over
  the same corpus, best of 3 (target >= 10 MiB/s);
- documents per CPU-second: `validate_paths` over the 10,000-manifest corpus
  of `bench/validate.py` (generated if missing), CPU time of this process,
  best of 2 (target >= 5,000);
- an invalid document against a valid one: each corpus template parsed as is
  and with one unexpected top-level field, pair by pair (target <= 3x).
"""

from __future__ import annotations

import statistics
import sys
import time

from _paired import machine, paired, save
from validate import CORPUS_SRC, WORK, generate

from flightdeck.documents import parse_document
from flightdeck.documents._frontmatter import normalise, split
from flightdeck.documents._yaml import YamlLimits, compose
from flightdeck.validation import ValidateOptions, validate_paths


def per_cpu_second() -> tuple[float, int]:
    if not (WORK / "manifests").exists():
        generate()
    corpus = WORK / "manifests"
    best = 0.0
    count = 0
    for _ in range(2):
        start = time.process_time()
        report = validate_paths([corpus], ValidateOptions())
        took = time.process_time() - start
        count = len(report.files)
        best = max(best, count / took)
    return best, count


def frontmatter_mib_per_cpu_second() -> tuple[float, float]:
    if not (WORK / "manifests").exists():
        generate()
    blocks = []
    for path in sorted((WORK / "manifests").rglob("*.md")):
        block = split(normalise(path.read_text("utf-8")))
        blocks.append((block.frontmatter, block.line_offset))
    mib = sum(len(text.encode("utf-8")) for text, _ in blocks) / 2**20
    limits = YamlLimits()
    best = 0.0
    for _ in range(3):
        start = time.process_time()
        for text, offset in blocks:
            compose(text, line_offset=offset, limits=limits)
        best = max(best, mib / (time.process_time() - start))
    return best, mib


def invalid_vs_valid(pairs: int) -> tuple[float, list[float]]:
    ratios: list[float] = []
    for kind in ("action", "tool", "driver", "skill"):
        for path in sorted((CORPUS_SRC / kind).rglob("*.md"))[:3]:
            good = path.read_text("utf-8")
            bad = good.replace("\n---\n", "\nunexpected_field: true\n---\n", 1)
            if parse_document(bad).ok:
                continue  # this schema admits extra fields: no invalid twin

            def timed(text: str) -> float:
                start = time.process_time()
                for _ in range(10):
                    parse_document(text)
                return time.process_time() - start

            timed(good), timed(bad)
            ratios.append(paired(lambda g=good: timed(g), lambda b=bad: timed(b), pairs).ratio)
    return statistics.median(ratios), ratios


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    fm_rate, fm_mib = frontmatter_mib_per_cpu_second()
    rate, count = per_cpu_second()
    ratio, ratios = invalid_vs_valid(pairs)
    lines = [
        "## validate in process (`bench/validate_inprocess.py`)",
        "",
        "| what | result | target |",
        "|---|---|---|",
        f"| frontmatter parse over the corpus ({fm_mib:.1f} MiB of YAML), MiB per CPU-second "
        f"(best of 3) | {fm_rate:.1f} | >= 10 |",
        f"| `validate_paths` over the {count:,}-manifest corpus, documents per CPU-second "
        f"(best of 2) | {rate:,.0f} | >= 5,000 |",
        f"| invalid document (one unknown field) vs the same document valid, CPU time, "
        f"{len(ratios)} corpus documents x {pairs} alternating pairs: median of per-document "
        f"ratios (lowest-highest) | {ratio:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) "
        "| <= 3x |",
        "",
        f"Machine: {machine()}.",
    ]
    save("validate_inprocess", "\n".join(lines))


if __name__ == "__main__":
    main()
