"""Benchmark: `flightdeck validate` over 10,000 manifests vs check-jsonschema.

Generates a corpus of mixed kinds from the acceptance corpus (ids and bodies
varied, a few KB each, about 3% made invalid), then times, as whole
processes pinned to one core where `taskset` exists:

- `flightdeck validate --format json CORPUS` (one process, all files);
- `check-jsonschema --schemafile <kind schema>` per kind, over the same
  frontmatters extracted to YAML files, with the same shipped schemas (their
  `$id`s rewritten to file URIs so nothing is fetched).

Runs them pair by pair, alternating, and prints the medians and the ratio
with its spread. Run with `make bench`.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS_SRC = ROOT / "tests" / "data" / "corpus" / "valid"
WORK = ROOT / "bench" / ".corpus" / "validate"
BIN = Path(sys.executable).parent
COUNT = 10_000
RUNS = 5
FILE_NAMES = {"action": "ACTION.md", "tool": "TOOL.md", "driver": "DRIVER.md", "skill": "SKILL.md"}
PARAGRAPH = (
    "This manifest is part of a generated benchmark corpus. It describes when a caller "
    "should use the unit, which side effects it has, and what an operator reviews before "
    "approving it. The text is long enough to make the file a realistic size.\n\n"
)


def _split(path: Path) -> tuple[dict[str, object], str]:
    text = path.read_text("utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def _templates() -> dict[str, list[tuple[dict[str, object], str]]]:
    found: dict[str, list[tuple[dict[str, object], str]]] = defaultdict(list)
    for kind in FILE_NAMES:
        for path in sorted((CORPUS_SRC / kind).rglob("*.md")):
            found[kind].append(_split(path))
    return found


def _vary(kind: str, data: dict[str, object], n: int, rng: random.Random) -> dict[str, object]:
    data = json.loads(json.dumps(data, default=str))
    if kind == "skill":
        data["name"] = f"bench-plan-{n}"
    elif kind == "action":
        data["id"] = f"bench{n}:run"
    elif "id" in data:
        data["id"] = f"bench-{kind}-{n}"
    if rng.random() < 0.03:  # a realistic share of broken files
        data["unexpected_field"] = True
    return data


def generate() -> dict[str, list[Path]]:
    if WORK.exists():
        shutil.rmtree(WORK)
    rng = random.Random(42)
    templates = _templates()
    kinds = sorted(templates)
    by_kind: dict[str, list[Path]] = defaultdict(list)
    for n in range(COUNT):
        kind = kinds[n % len(kinds)]
        data, body = rng.choice(templates[kind])
        varied = _vary(kind, data, n, rng)
        folder = WORK / "manifests" / kind / f"m{n:05d}"
        folder.mkdir(parents=True)
        front = yaml.safe_dump(varied, sort_keys=False, allow_unicode=True)
        text = f"---\n{front}---\n{body}\n{PARAGRAPH * rng.randint(2, 6)}"
        (folder / FILE_NAMES[kind]).write_text(text, "utf-8")
        extracted = WORK / "frontmatter" / kind / f"m{n:05d}.yaml"
        extracted.parent.mkdir(parents=True, exist_ok=True)
        extracted.write_text(front, "utf-8")
        by_kind[kind].append(extracted)
    return by_kind


def _file_uri_schemas() -> Path:
    """The shipped schemas with `$id`s rewritten to file URIs (offline refs)."""
    out = WORK / "schemas"
    out.mkdir(parents=True, exist_ok=True)
    src = ROOT / "src" / "flightdeck" / "documents" / "schemas"
    base = "https://flightdeck.dev/schemas/v1/"
    for path in src.glob("*.schema.json"):
        text = path.read_text("utf-8").replace(base, out.as_uri() + "/")
        (out / path.name).write_text(text, "utf-8")
    return out


def _pin() -> list[str]:
    return ["taskset", "-c", "0"] if shutil.which("taskset") else []


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(_pin() + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def _schema_for(kind: str, schemas: Path, files: list[Path]) -> list[tuple[Path, list[Path]]]:
    """check-jsonschema takes one schema per run: split drivers by `kind: sdk`."""
    if kind != "driver":
        return [(schemas / f"{kind}.schema.json", files)]
    sdk, other = [], []
    for path in files:
        (sdk if "kind: sdk" in path.read_text("utf-8") else other).append(path)
    return [(schemas / "driver-sdk.schema.json", sdk), (schemas / "driver.schema.json", other)]


def main() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from _paired import machine, paired, save

    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    by_kind = generate()
    schemas = _file_uri_schemas()
    total_bytes = sum(p.stat().st_size for p in (WORK / "manifests").rglob("*.md"))
    fd_cmd = [str(BIN / "flightdeck"), "validate", "--format", "json", str(WORK / "manifests")]

    def flightdeck() -> float:
        return _time(fd_cmd)

    def check_jsonschema() -> float:
        elapsed = 0.0
        for kind, files in by_kind.items():
            for schema, subset in _schema_for(kind, schemas, files):
                if subset:
                    cmd = [str(BIN / "check-jsonschema"), "--schemafile", str(schema)]
                    elapsed += _time(cmd + [str(p) for p in subset])
        return elapsed

    # B/A with A = flightdeck: the ratio is how many times faster flightdeck is.
    result = paired(flightdeck, check_jsonschema, pairs)
    fd, cj = result.a_median, result.b_median
    pin = "pinned to one core with `taskset -c 0`, " if _pin() else ""
    lines = [
        "## validate (`bench/validate.py`)",
        "",
        f"{COUNT:,} generated manifests of mixed kinds (action, tool, driver, skill;"
        f" {total_bytes / COUNT / 1024:.1f} KiB average; about 3% invalid), each tool run as a"
        f" whole process, {pin}{pairs} alternating pairs. check-jsonschema gets the same"
        " frontmatters as YAML files and the same schemas, one process per schema.",
        "",
        "| `flightdeck validate --format json` | `check-jsonschema` | flightdeck faster by"
        " (lowest-highest pair) | target |",
        "|---|---|---|---|",
        f"| {fd:.2f} s, {COUNT / fd:,.0f} manifests/s | {cj:.2f} s, {COUNT / cj:,.0f}/s"
        f" | {result.spread()} | >= 20x |",
        "",
        f"Machine: {machine()}.",
    ]
    save("validate", "\n".join(lines))


if __name__ == "__main__":
    main()
