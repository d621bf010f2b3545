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
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from flightdeck.launch._errors import LaunchError  # noqa: E402
from flightdeck.launch._fdtree import remove_path  # noqa: E402
from flightdeck.launch._oci_unpack import tree_digest, unpack  # noqa: E402
from flightdeck.launch._pull_limits import MiB, PullLimits  # noqa: E402

LIMITS = PullLimits(max_entry_bytes=64 * MiB, max_unpacked_bytes=256 * MiB, max_entries=20_000)
NAMES = ["a", "b", "c", "d", "usr", "lib", "etc", "fdz", "x" * 247, "l" * 254, "Ω", "a b"]
STEPS = "abcdefghijklmnop"


class Hang(Exception):
    pass


# -- building cases ---------------------------------------------------------


def _path(rng: random.Random, made: list[str], hostile: bool) -> str:
    if hostile:
        roll = rng.random()
        if roll < 0.3:
            return "/".join(["d"] * rng.randint(100, 200))  # near or past the depth limit
        if roll < 0.5:
            return "/".join("x" * 247 for _ in range(rng.randint(15, 20)))  # past PATH_MAX
        return rng.choice(
            ["", ".", "..", "a/../..", "/a", "./a", "a//b", "a/./b", "a/../b", "Ω/\udcff"]
        )
    dirs = [name for name in made if name.endswith("/")]
    if dirs and rng.random() < 0.7:
        return rng.choice(dirs) + rng.choice(NAMES)
    return "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))


def _target(rng: random.Random, name: str, outside: str, made: list[str], hostile: bool) -> str:
    depth = name.count("/")
    if not hostile:
        if made and rng.random() < 0.5:
            return "/" + rng.choice(made)
        return rng.choice(["/usr/lib", "/fdz/x", "../" * rng.randint(0, depth) + "a", "."])
    roll = rng.random()
    if roll < 0.4:  # climbing: at most to the case folder, never to the machine's root
        return "../" * rng.randint(depth + 1, depth + 4) + rng.choice(["", "outside", "a"])
    if roll < 0.7:
        return outside + rng.choice(["", "/victim", "/sub"])
    return rng.choice(["..", "a/b/../../..", name, "x" * 300, "/" + "x" * 5000])


def _chain(tar: tarfile.TarFile, outside_up: int) -> list[str]:
    """The PATH_MAX chain: sixteen 247-character folders behind one-letter
    links, a link back to the root, and `escape` leading above it."""
    path, names = "", []
    for step in STEPS:
        _add(tar, os.path.join(path, "d" * 247), tarfile.DIRTYPE)
        _add(tar, os.path.join(path, step), tarfile.SYMTYPE, link="d" * 247)
        names += [os.path.join(path, "d" * 247), os.path.join(path, step)]
        path = os.path.join(path, "d" * 247)
    deep = "/".join([*STEPS, "l" * 254])
    _add(tar, deep, tarfile.SYMTYPE, link="../" * len(STEPS))
    _add(tar, "escape", tarfile.SYMTYPE, link=deep + "/" + "../" * outside_up + "outside")
    return [*names, deep, "escape"]


def _add(
    tar: tarfile.TarFile,
    name: str,
    kind: bytes,
    *,
    link: str = "",
    data: bytes = b"",
    mode: int = 0o644,
    pax: dict[str, str] | None = None,
) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode, info.size = kind, link, mode, len(data)
    if pax:
        info.pax_headers = pax
    tar.addfile(info, io.BytesIO(data) if data else None)


def _member(
    tar: tarfile.TarFile, rng: random.Random, outside: str, made: list[str], hostile: bool
) -> str:
    """Add one member; its name."""
    roll = rng.random()
    name = _path(rng, made, hostile and rng.random() < 0.3)
    if roll < 0.2:
        _add(tar, name, tarfile.DIRTYPE, mode=rng.choice([0o755, 0o1777, 0o700]))
        made.append(name.rstrip("/") + "/")
    elif roll < 0.45:
        size = rng.choice([0, 1, 100, 4096, 20000])
        _add(tar, name, tarfile.REGTYPE, data=rng.randbytes(size), mode=rng.choice([0o644, 0o6755]))
        made.append(name)
    elif roll < 0.6:
        _add(tar, name, tarfile.SYMTYPE, link=_target(rng, name, outside, made, hostile))
        made.append(name)
    elif roll < 0.7:
        bad = [outside + "/secret", "../outside/secret", "/etc/hostname", "missing"]
        files = [name for name in made if not name.endswith("/")]
        target = rng.choice(bad) if hostile or not files else rng.choice(files)
        _add(tar, name, tarfile.LNKTYPE, link=target)
    elif roll < 0.8:
        folder = rng.choice(["", *[n for n in made if n.endswith("/")]])
        leaves = [".wh..wh..opq", ".wh." + rng.choice(NAMES)]
        if made and rng.random() < 0.5:
            folder, _, leaf = rng.choice(made).rstrip("/").rpartition("/")
            leaves = [".wh." + leaf]
            folder = folder + "/" if folder else ""
        if hostile:
            leaves += [".wh.", ".wh..", ".wh..."]
        name = folder + rng.choice(leaves)
        _add(tar, name, tarfile.REGTYPE)
    elif roll < 0.83:
        _add(tar, name, rng.choice([tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE]))
    elif roll < 0.88:
        _sparse(tar, rng, name, hostile)
    elif roll < 0.9 and hostile:
        _add(tar, name, tarfile.REGTYPE, data=bytes(rng.choice([1, 4, 8]) * MiB))
    elif roll < 0.92 and hostile:
        run = "7" * rng.choice([10, 100, 1000, 20000])
        _add(tar, name, tarfile.REGTYPE, data=b"x", pax={"comment": run})
    else:
        _add(tar, name, tarfile.REGTYPE, data=b"plain")
        made.append(name)
    return name


def _sparse(tar: tarfile.TarFile, rng: random.Random, name: str, hostile: bool) -> None:
    size = rng.choice([4096, MiB, 32 * MiB, *([1 << 30, 1 << 40] if hostile else [])])
    regions = sorted({rng.randrange(0, size) for _ in range(rng.randint(0, 4))})
    if hostile and rng.random() < 0.3:
        regions.reverse()  # a malformed map: unsorted
    pieces, end = [], 0
    for offset in regions:
        if offset >= end or hostile:
            pieces.append((offset, rng.randbytes(min(100, size - offset))))
            end = offset + len(pieces[-1][1])
    stored = b"".join(data for _, data in pieces)
    info = tarfile.TarInfo("GNUSparseFile.0/" + name.rsplit("/", 1)[-1])
    info.size = len(stored)
    info.pax_headers = {
        "GNU.sparse.name": name,
        "GNU.sparse.size": str(size),
        "GNU.sparse.map": ",".join(f"{o},{len(d)}" for o, d in pieces) or "0,0",
    }
    tar.addfile(info, io.BytesIO(stored))


def _units(names: list[str]) -> int:
    """Members plus the folders their names make along the way: a member
    four folders deep creates up to four (as in an ordinary layer)."""
    folders: set[str] = set()
    for name in names:
        parts: list[str] = []
        for part in name.split("/")[:-1]:
            if part == "..":
                if parts:
                    parts.pop()
            elif part not in ("", "."):
                parts.append(part)
                folders.add("/".join(parts))
    return len(names) + len(folders)


def make_case(seed: int, outside: str) -> list[tuple[bytes, str, int, int]]:
    """(layer bytes, compression, work units, raw tar bytes) for each layer:
    most members ordinary, a seed-chosen share of them hostile."""
    rng = random.Random(seed)
    hostility = rng.choice([0.0, 0.02, 0.05, 0.1, 0.3, 1.0])
    made: list[str] = []
    layers = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        buffer = io.BytesIO()
        names: list[str] = []
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            if rng.random() < 0.05:
                names += _chain(tar, rng.randint(0, 4))
            for _ in range(rng.randint(1, 60)):
                names.append(_member(tar, rng, outside, made, rng.random() < hostility))
        raw = buffer.getvalue()
        roll = rng.random()
        if roll < 0.05:
            flipped = bytearray(raw)
            for _ in range(rng.randint(1, 10)):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            raw = bytes(flipped)
        elif roll < 0.08:
            raw = raw[: rng.randrange(len(raw))]
        gz = rng.random() < 0.3
        data = gzip.compress(raw, compresslevel=1) if gz else raw
        layers.append((data, "gz" if gz else "", _units(names), len(raw)))
    return layers


def ordinary(entries: int, file_size: int = 1024) -> bytes:
    """An ordinary layer: a few folders of small files, as images have."""
    rng = random.Random(entries)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        made = 0
        for pkg in range(max(1, entries // 20)):
            base = f"usr/share/doc/pkg{pkg}"
            for i in range(min(20, entries - made)):
                _add(tar, f"{base}/file{i}.txt", tarfile.REGTYPE, data=rng.randbytes(file_size))
                made += 1
    return gzip.compress(buffer.getvalue(), compresslevel=1)


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
