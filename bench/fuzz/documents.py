"""Structure-aware fuzzing of the document layer (`make fuzz`; not part of CI).

Each case is a byte string built from a seed: a mutation of a manifest from
tests/data/corpus (byte flips, spliced spans, YAML punctuation, nesting and
alias bombs, huge numbers, control characters, invalid UTF-8, two manifests
spliced together) or, one case in ten, random bytes. Every case goes through
`parse_document` in a worker process; the parent counts

- uncaught exceptions (anything `parse_document` lets escape),
- crashes (a worker killed by a signal: the batch is bisected to the seed),
- hangs (a case over --case-timeout seconds),

and the worst cost per KB, compared with an ordinary valid TOOL.md of the
same size. Cases are a pure function of their seed, so any finding replays
with `--replay SEED`.

    python bench/fuzz/documents.py -n 1000000 -j 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
KINDS = ("ACTION.md", "TOOL.md", "DRIVER.md", "SKILL.md", "IO.md", "RUNNER.md")
TOKENS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b": ",
    b"- ",
    b"? ",
    b"&a ",
    b"*a",
    b"<<: *a\n",
    b"!!int ",
    b"!!str ",
    b"!!binary ",
    b"!custom ",
    b"'",
    b'"',
    b"|\n",
    b">-\n",
    b"#",
    b"\t",
    b"\n",
    b"\r\n",
    b"---\n",
    b"...\n",
    b"%YAML 1.2\n",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xff\xfe",
    b"\xc3",
    b"~",
    b"null",
    b"true",
    b"on",
    b".nan",
    b"-.inf",
    b"0x",
    b"0o",
    b"1e999",
    b"$ref: ",
    b'"https://example.com/x.json"',
    b"#/$defs/x",
    b"\\u0000",
    b"\xe2\x80\xae",
]


def corpus() -> list[bytes]:
    return [p.read_bytes() for p in sorted(CORPUS.rglob("*.md"))]


def _bomb(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    n = rng.choice([70, 200, 1000, 5000, 40_000])
    if kind == 0:
        return b"[" * n + b"]" * n
    if kind == 1:
        return b"{a: " * n + b"}" * n
    if kind == 2:
        return b"\n" + b"".join(b" " * (i + 1) + b"k:\n" for i in range(min(n, 3000)))
    if kind == 3:
        return rng.choice(b"123456789").to_bytes(1, "big") * rng.choice([50, 101, 4301, 10_000])
    if kind == 4:  # billion laughs
        lines = [b"\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
        for i in range(1, 9):
            refs = b", ".join([b"*l%d" % (i - 1)] * 10)
            lines.append(b"l%d: &l%d [%s]" % (i, i, refs))
        return b"\n".join(lines) + b"\n"
    return b"".join(b"\nk%d: %d" % (i, i) for i in range(min(n, 20_000))) + b"\n"


def mutate(seed: int, docs: list[bytes]) -> bytes:
    """The case for `seed`: deterministic."""
    rng = random.Random(seed)
    if rng.random() < 0.1:
        return rng.randbytes(rng.choice([0, 1, 16, 256, 4096]))
    data = bytearray(rng.choice(docs))
    for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
        op = rng.randrange(8)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:  # flip a byte
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif op == 1:  # insert a YAML token
            data[at:at] = rng.choice(TOKENS)
        elif op == 2 and data:  # delete a span
            del data[at : at + rng.randrange(1, 64)]
        elif op == 3 and data:  # duplicate a span
            start = rng.randrange(len(data))
            data[at:at] = data[start : start + rng.randrange(1, 256)]
        elif op == 4:  # splice in another manifest
            other = rng.choice(docs)
            cut = rng.randrange(len(other) + 1)
            data[at:] = other[cut:]
        elif op == 5:  # a bomb after some line of the frontmatter
            line = data.find(b"\n", at)
            where = line + 1 if line != -1 else len(data)
            data[where:where] = b"x" + str(rng.randrange(99)).encode() + b": " + _bomb(rng)
        elif op == 6:  # random bytes
            data[at:at] = rng.randbytes(rng.randrange(1, 32))
        else:  # swap indentation for tabs or strip it
            data = bytearray(data.replace(b"\n  ", rng.choice([b"\n\t", b"\n", b"\n   "]), 1))
    return bytes(data)


def ordinary(size: int) -> bytes:
    """A valid TOOL.md of about `size` bytes: a realistic, growing inputs schema."""
    head = (
        b"---\nname: Ordinary\nid: ordinary.tool\n"
        b"description: A tool with many inputs, the yardstick for fuzzed documents.\n"
        b"version: 1.0.0\ninputs:\n  type: object\n  properties:\n"
    )
    parts = [head]
    total, i = len(head), 0
    while total < size:
        line = b'    p%d: { type: string, description: "input number %d" }\n' % (i, i)
        parts.append(line)
        total += len(line)
        i += 1
    parts.append(b"outputs:\n  type: object\n---\nBody.\n")
    return b"".join(parts)


def _kind_name(seed: int) -> str:
    return KINDS[seed % len(KINDS)]


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def run_batch(start: int, count: int, case_timeout: float) -> dict[str, Any]:
    """Worker: run seeds [start, start+count); report findings and the slowest cases."""
    from flightdeck.documents import parse_document

    docs = corpus()
    signal.signal(signal.SIGALRM, _alarm)
    errors: list[dict[str, Any]] = []
    slow: list[tuple[float, int, int]] = []  # (seconds per KB, seed, size)
    for seed in range(start, start + count):
        case = mutate(seed, docs)
        signal.setitimer(signal.ITIMER_REAL, case_timeout)
        began = time.perf_counter()
        try:
            parse_document(case, path=_kind_name(seed))
        except _Hang:
            errors.append({"seed": seed, "kind": "hang"})
        except BaseException as exc:  # the finding this fuzzer looks for
            errors.append({"seed": seed, "kind": "exception", "error": repr(exc)[:300]})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        elapsed = time.perf_counter() - began
        slow.append((elapsed / max(len(case), 256) * 1024, seed, len(case)))
        if len(slow) > 64:
            slow.sort(reverse=True)
            del slow[16:]
    slow.sort(reverse=True)
    return {"errors": errors, "slow": slow[:16]}


def _spawn(start: int, count: int, args: argparse.Namespace) -> subprocess.Popen[str]:
    cmd = [sys.executable, __file__, "--worker", str(start), str(count)]
    cmd += ["--case-timeout", str(args.case_timeout)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def _bisect_crash(start: int, count: int, args: argparse.Namespace) -> list[int]:
    """Seeds in a crashed batch that crash on their own."""
    if count == 1:
        return [start]
    half = count // 2
    found: list[int] = []
    for lo, n in ((start, half), (start + half, count - half)):
        proc = _spawn(lo, n, args)
        proc.communicate()
        if proc.returncode != 0:
            found += _bisect_crash(lo, n, args)
    return found


def _batches(n: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, size):
        yield start, min(size, n - start)


def _time(data: bytes, name: str, repeat: int = 5) -> float:
    from flightdeck.documents import parse_document

    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        parse_document(data, path=name)
        best = min(best, time.perf_counter() - began)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="documents to run")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--case-timeout", type=float, default=10.0)
    parser.add_argument("--replay", type=int, help="run one seed in this process")
    parser.add_argument("--worker", type=int, nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--retime", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_batch(args.worker[0], args.worker[1], args.case_timeout)))
        return 0
    if args.retime is not None:
        case = mutate(args.retime, corpus())
        cost = _time(case, _kind_name(args.retime))
        print(json.dumps([cost, _time(ordinary(len(case)), "TOOL.md"), len(case)]))
        return 0
    if args.replay is not None:
        from flightdeck.documents import parse_document

        result = parse_document(mutate(args.replay, corpus()), path=_kind_name(args.replay))
        for diag in result.diagnostics:
            print(diag.location, diag.code, diag.message[:120])
        return 0
    began = time.perf_counter()
    pending = list(_batches(args.n, args.batch))
    running: list[tuple[subprocess.Popen[str], int, int]] = []
    errors: list[dict[str, Any]] = []
    crashes: list[int] = []
    slow: list[tuple[float, int, int]] = []
    while pending or running:
        while pending and len(running) < args.j:
            start, count = pending.pop(0)
            running.append((_spawn(start, count, args), start, count))
        proc, start, count = running.pop(0)
        out, _ = proc.communicate()
        if proc.returncode != 0:
            crashes += _bisect_crash(start, count, args)
            continue
        report = json.loads(out)
        errors += report["errors"]
        slow = sorted(slow + [tuple(s) for s in report["slow"]], reverse=True)[:32]
    wall = time.perf_counter() - began
    # Re-time the slowest cases against an ordinary document of the same size,
    # in a worker too: a case that kills the process must not kill the report.
    worst = []
    for _, seed, _size in slow[:16]:
        cmd = [sys.executable, __file__, "--retime", str(seed)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            crashes.append(seed)
            continue
        cost, base, size = json.loads(done.stdout)
        worst.append((cost / base, seed, size, cost))
    worst.sort(reverse=True)
    print(f"documents: {args.n:,} in {wall:.0f} s with {args.j} worker(s)")
    print(f"uncaught exceptions: {sum(e['kind'] == 'exception' for e in errors)}")
    print(f"hangs (> {args.case_timeout:g} s): {sum(e['kind'] == 'hang' for e in errors)}")
    print(f"crashes: {len(crashes)} {crashes[:10]}")
    kinds: dict[str, int] = {}
    for error in errors:
        name = error.get("error", "hang").split("(", 1)[0]
        kinds[name] = kinds.get(name, 0) + 1
    for name, count in sorted(kinds.items()):
        first = next(e["seed"] for e in errors if e.get("error", "hang").startswith(name))
        print(f"   {name}: {count} (replay with --replay {first})")
    for ratio, seed, size, cost in worst[:5]:
        print(
            f"slow seed {seed}: {size:,} bytes in {cost * 1000:.2f} ms = "
            f"{ratio:.1f}x an ordinary TOOL.md of the same size"
        )
    return 1 if errors or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
