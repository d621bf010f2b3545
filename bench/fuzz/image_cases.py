"""The cases of the malicious-layer fuzzer (bench/fuzz/images.py): layers
built from a seed, most members ordinary and a seed-chosen share hostile,
and the ordinary layers the cost is compared with."""

from __future__ import annotations

import gzip
import io
import os
import random
import tarfile

MiB = 1 << 20
NAMES = ["a", "b", "c", "d", "usr", "lib", "etc", "fdz", "x" * 247, "l" * 254, "Ω", "a b"]
STEPS = "abcdefghijklmnop"


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
