"""A small mutation pass (not run in CI).

    .venv/bin/python scripts/mutate.py src/flightdeck/flightplan/signing/_trust.py \
        tests/flightplan/test_trust_chain.py [more test files...]

Applies one mutant at a time to the module (a flipped comparison, a dropped
`not`, a `raise` replaced by `pass`, `and`/`or` swapped; never inside a
string literal or a comment), runs the given tests (and any pytest options,
such as `-k`) with -x, restores the file, and reports killed/total and the
survivors.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
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


def _text_spans(source: str) -> dict[int, list[tuple[int, int]]]:
    """Per line (0-based), the column spans inside string literals and
    comments: a "not" in a message or a docstring is no mutant worth a run."""
    spans: dict[int, list[tuple[int, int]]] = {}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        (first, start), (last, end) = token.start, token.end
        for row in range(first, last + 1):
            spans.setdefault(row - 1, []).append(
                (start if row == first else 0, end if row == last else 10**9)
            )
    return spans


def mutants(lines: list[str]) -> list[tuple[int, str]]:
    out = []
    spans = _text_spans("".join(lines))
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("#", '"', "def ", "class ", "import ", "from ")):
            continue
        text = spans.get(number, [])
        for pattern, replacement in _SWAPS:
            # The first match in code, not inside a string or a comment.
            match = next(
                (m for m in pattern.finditer(line) if not any(a <= m.start() < b for a, b in text)),
                None,
            )
            if match is None:
                continue
            mutated = line[: match.start()] + match.expand(replacement) + line[match.end() :]
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
