"""Malicious-layer fuzzing of the image unpacker (`make fuzz-images`, part of `make fuzz`).

Each case is one to three layers built from a seed: random tars of files,
folders, links (inside, climbing out with `../`, absolute, to the host
folders around the rootfs), hard links (to entries, absolute, missing),
whiteouts and opaque whiteouts, deep paths and long names past PATH_MAX
(the CVE-2025-4517 chain), huge and sparse members, fifos and devices,
PAX headers with long digit runs, plus flipped bytes, truncation and gzip.
The cases are unpacked one after another into `<case>/a/b/c/rootfs`, with
sentinel files and folders around it (`<case>/outside`, and one at every
level above the rootfs), and the fuzzer counts

- writes outside the rootfs (any sentinel or folder around it changed),
- tracebacks (any exception but the unpacker's own `LaunchError`),
- hangs (a case over --case-timeout seconds),

and the worst unpack cost, CPU time compared with an ordinary layer of as
many entries and bytes (`c_layer + c_entry * entries + c_byte * bytes`,
fitted on ordinary layers first). Run as root, the worker runs inside
bubblewrap with only its work folder writable, so a broken unpacker cannot
harm the machine. Cases are a pure function of their seed: `--replay SEED`.

    python bench/fuzz/images.py -n 10000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from image_cases import make_case, ordinary  # noqa: E402

from flightdeck.launch.core._errors import LaunchError  # noqa: E402
from flightdeck.launch.image._fdtree import remove_path  # noqa: E402
from flightdeck.launch.image._pull_limits import MiB, PullLimits  # noqa: E402
from flightdeck.launch.image._unpack import tree_digest, unpack  # noqa: E402

LIMITS = PullLimits(max_entry_bytes=64 * MiB, max_unpacked_bytes=256 * MiB, max_entries=20_000)


class Hang(Exception):
    pass


# -- running cases ----------------------------------------------------------


def _prepare(case: Path) -> Path:
    """Sentinels around `<case>/a/b/c/rootfs`; the rootfs path."""
    (case / "outside" / "sub").mkdir(parents=True, exist_ok=True)
    (case / "outside" / "victim").write_text("host\n")
    (case / "outside" / "secret").write_text("secret\n")
    (case / "outside" / "sub" / "kept").write_text("host\n")
    level = case
    for name in ("a", "b", "c"):
        level = level / name
        level.mkdir(exist_ok=True)
        (level / "sentinel").write_text(name)
    return level / "rootfs"


def _snapshot(case: Path, rootfs: Path) -> str:
    """Everything around the rootfs: names, types, modes, link counts, bytes."""
    digest = hashlib.sha256()
    for folder, dirs, names in os.walk(case):
        if Path(folder) == rootfs.parent:
            dirs[:] = [d for d in dirs if d != "rootfs"]
        dirs.sort()
        for name in sorted([*dirs, *names]):
            path = Path(folder, name)
            if path == rootfs:
                continue
            info = os.lstat(path)
            digest.update(f"{path}\0{info.st_mode}\0{info.st_nlink}\0{info.st_size}\0".encode())
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            elif path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _alarm(signum: int, frame: Any) -> None:
    raise Hang()


def run_case(seed: int, case: Path, timeout: float) -> dict[str, Any]:
    rootfs = _prepare(case)
    before = _snapshot(case, rootfs)
    layers = make_case(seed, str(case / "outside"))
    blobs = []
    for number, (data, compression, _, _) in enumerate(layers):
        blob = case / f"layer{number}"
        blob.write_bytes(data)
        blobs.append((blob, compression))
    result: dict[str, Any] = {
        "seed": seed,
        "layers": len(layers),
        "units": sum(units for _, _, units, _ in layers),
        "bytes": sum(size for _, _, _, size in layers),
    }
    signal.setitimer(signal.ITIMER_REAL, timeout)
    started = time.process_time()
    try:
        unpack(blobs, rootfs, LIMITS)
        result["cpu"] = time.process_time() - started
        tree_digest(rootfs)
        result["outcome"] = "unpacked"
    except LaunchError as exc:
        result.setdefault("cpu", time.process_time() - started)
        result["outcome"] = exc.code
    except Hang:
        result["outcome"] = "hang"
    except BaseException as exc:  # that is what is counted
        result.setdefault("cpu", time.process_time() - started)
        result["outcome"] = "traceback"
        result["traceback"] = "".join(traceback.format_exception(exc))[-2000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    remove_path(rootfs)
    for blob, _ in blobs:
        blob.unlink()
    try:
        result["outside_changed"] = _snapshot(case, rootfs) != before
    except (OSError, RecursionError):
        result["outside_changed"] = True
    if result["outside_changed"]:
        remove_path(case)  # what escaped is reported; the next case starts clean
    return result


def calibrate(work: Path) -> tuple[float, float, float]:
    """Per layer, per entry and per byte CPU cost of ordinary layers."""

    def cost(blob_bytes: bytes) -> float:
        best = float("inf")
        for _ in range(5):
            blob = work / "ordinary"
            blob.write_bytes(blob_bytes)
            rootfs = work / "ordinary-rootfs"
            started = time.process_time()
            unpack([(blob, "gz")], rootfs, LIMITS)
            best = min(best, time.process_time() - started)
            remove_path(rootfs)
        return best

    one, many = cost(ordinary(1)), cost(ordinary(1024))
    per_entry = max((many - one) / 1023, 1e-7)
    big = cost(ordinary(1, file_size=32 * MiB))
    per_byte = max((big - one) / (32 * MiB), 1e-12)
    return max(one - per_entry, 1e-6), per_entry, per_byte


def worker(args: argparse.Namespace) -> int:
    work = Path(args.work)
    signal.signal(signal.SIGALRM, _alarm)
    layer_cost, entry_cost, byte_cost = calibrate(work) if args.cost else (0.0, 0.0, 0.0)
    findings: list[dict[str, Any]] = []
    outcomes: dict[str, int] = {}
    worst: dict[str, Any] = {"ratio": 0.0}
    layers = cases = 0
    seed = args.seed
    case = work / "case"
    while layers < args.n:
        result = run_case(seed, case, args.case_timeout)
        outcomes[result["outcome"]] = outcomes.get(result["outcome"], 0) + 1
        if result["outcome"] in ("traceback", "hang") or result["outside_changed"]:
            findings.append(result)
        if "cpu" in result and args.cost:
            base = layer_cost * result["layers"] + entry_cost * result["units"]
            ratio = result["cpu"] / (base + byte_cost * result["bytes"])
            for _ in range(3 if ratio > args.max_ratio else 0):  # noise: the best of a few
                again = run_case(seed, case, args.case_timeout)
                ratio = min(ratio, again.get("cpu", ratio) / (base + byte_cost * result["bytes"]))
            if ratio > worst["ratio"]:
                worst = {"ratio": round(ratio, 2), "seed": seed, "outcome": result["outcome"]}
        layers += result["layers"]
        cases += 1
        seed += 1
    summary = {
        "layers": layers,
        "cases": cases,
        "outcomes": outcomes,
        "findings": findings,
        "writes_outside": sum(1 for f in findings if f["outside_changed"]),
        "tracebacks": sum(1 for f in findings if f["outcome"] == "traceback"),
        "hangs": sum(1 for f in findings if f["outcome"] == "hang"),
        "ordinary": {
            "per_layer_s": layer_cost,
            "per_entry_s": entry_cost,
            "per_mib_s": byte_cost * MiB,
        },
        "worst_cost": worst if args.cost else None,
    }
    print(json.dumps(summary))
    return 0


def _sandboxed(argv: list[str], work: Path) -> list[str]:
    """Run as root: everything read-only but the work folder."""
    bwrap = shutil.which("bwrap")
    if os.geteuid() != 0:
        return argv
    if bwrap is None:
        raise SystemExit("as root the fuzzer runs in bubblewrap: apt-get install -y bubblewrap")
    return [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--bind", str(work), str(work), "--unshare-pid", "--die-with-parent", *argv,
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10_000, help="layers to unpack")
    parser.add_argument("--seed", type=int, default=0, help="the first case's seed")
    parser.add_argument("--replay", type=int, help="run one case and print its result")
    parser.add_argument("--case-timeout", type=float, default=30.0)
    parser.add_argument("--max-ratio", type=float, default=10.0)
    parser.add_argument("--no-cost", dest="cost", action="store_false", help="skip the cost check")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    with tempfile.TemporaryDirectory(prefix="fd-fuzz-images-") as work:
        if args.replay is not None:
            args.seed, args.n = args.replay, 1
        argv = [sys.executable, __file__, "--worker", "--work", work, "-n", str(args.n)]
        argv += ["--seed", str(args.seed), "--case-timeout", str(args.case_timeout)]
        argv += ["--max-ratio", str(args.max_ratio)] + ([] if args.cost else ["--no-cost"])
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(_sandboxed(argv, Path(work)), capture_output=True, text=True, env=env)
        with_tail = done.stderr[-3000:]
        remove_path(Path(work) / "case")  # a deep tree TemporaryDirectory could not remove
    if done.returncode != 0 or not done.stdout.strip():
        print(f"the fuzz worker failed (exit {done.returncode}):\n{with_tail}", file=sys.stderr)
        return 1
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(summary, indent=2))
    bad = summary["writes_outside"] or summary["tracebacks"] or summary["hangs"]
    too_slow = args.cost and summary["worst_cost"]["ratio"] > args.max_ratio
    return 1 if bad or too_slow else 0


if __name__ == "__main__":
    sys.exit(main())
