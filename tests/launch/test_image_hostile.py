"""Hostile layers, as root: nothing a layer says reaches outside the rootfs.

The first four are the CVE-2025-4517 class: sixteen nested 247-character
folders reached through one-letter links make the path longer than
PATH_MAX, where Python's `realpath` before 3.11.13 stops resolving, and a
`../` chain then leads out. The old unpacker (tarfile's `data` filter and
its own `realpath` check) created, deleted, emptied and hard-linked host
files with them; the descriptor walk refuses the path. Sentinels sit four
levels above the rootfs (`<tmp>/cache/sha256/.pull-*/rootfs`), where the
links lead.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import LaunchError
from flightdeck.launch.image._cache import ImageCache
from flightdeck.launch.image._fdtree import remove_path
from flightdeck.launch.image._pull_limits import PullLimits
from flightdeck.launch.image._rootfs import MAX_DEPTH
from flightdeck.launch.image._unpack import unpack

from ._image import layer, serve

Add = Callable[[tarfile.TarFile], None]
STEPS = "abcdefghijklmnop"
LONG = "d" * 247
DEEP = "/".join([*STEPS, "l" * 254])  # through every one-letter link, then back to the root


def _tar(*adders: Add, gz: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for add in adders:
            add(tar)
    raw = buffer.getvalue()
    return gzip.compress(raw, mtime=0) if gz else raw


def _entry(name: str, kind: bytes, *, link: str = "", data: bytes = b"", mode: int = 0o644) -> Add:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mode, info.size = kind, link, mode, len(data)
        tar.addfile(info, io.BytesIO(data) if data else None)

    return add


def _past_path_max(tar: tarfile.TarFile) -> None:
    """The long chain, and `escape`: a link that leads four levels above the
    root, where `realpath` gives up before it sees that."""
    path = ""
    for step in STEPS:
        _entry(os.path.join(path, LONG), tarfile.DIRTYPE, mode=0o755)(tar)
        _entry(os.path.join(path, step), tarfile.SYMTYPE, link=LONG)(tar)
        path = os.path.join(path, LONG)
    _entry(DEEP, tarfile.SYMTYPE, link="../" * len(STEPS))(tar)
    _entry("escape", tarfile.SYMTYPE, link=DEEP + "/" + "../" * 4 + "outside")(tar)


def _pull(tmp_path: Path, layers: list[bytes]) -> Path:
    pinned, resolver = serve([(blob, blob[:2] == b"\x1f\x8b") for blob in layers])
    return ImageCache(tmp_path / "cache").ensure(pinned, lambda: resolver).rootfs


def _refused(tmp_path: Path, layers: list[bytes]) -> str:
    with pytest.raises(LaunchError) as caught:
        _pull(tmp_path, layers)
    left = [p.name for p in (tmp_path / "cache" / "sha256").iterdir() if p.suffix != ".lock"]
    assert left == []  # nothing half-cached, whatever the layer nested
    return caught.value.code


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "sub").mkdir(parents=True)
    (folder / "victim").write_text("host file\n")
    (folder / "secret").write_text("host secret\n")
    (folder / "sub" / "kept").write_text("host file\n")
    return folder


def _untouched(tmp_path: Path, outside: Path) -> None:
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "outside"]
    assert sorted(p.name for p in outside.iterdir()) == ["secret", "sub", "victim"]
    assert (outside / "victim").read_text() == "host file\n"
    assert [p.name for p in (outside / "sub").iterdir()] == ["kept"]
    assert (outside / "secret").stat().st_nlink == 1


def test_a_path_past_path_max_cannot_create_a_file_outside(tmp_path: Path, outside: Path) -> None:
    planted = _tar(_past_path_max, _entry("escape/planted", tarfile.REGTYPE, data=b"owned"))
    assert _refused(tmp_path, [planted]) == "image.unsafe_layer"
    _untouched(tmp_path, outside)


def test_a_whiteout_past_path_max_cannot_delete_a_file_outside(
    tmp_path: Path, outside: Path
) -> None:
    upper = _tar(_entry("escape/.wh.victim", tarfile.REGTYPE))
    assert _refused(tmp_path, [_tar(_past_path_max), upper]) == "image.unsafe_layer"
    _untouched(tmp_path, outside)


def test_an_opaque_whiteout_past_path_max_cannot_empty_a_folder_outside(
    tmp_path: Path, outside: Path
) -> None:
    upper = _tar(_entry("escape/sub/.wh..wh..opq", tarfile.REGTYPE))
    assert _refused(tmp_path, [_tar(_past_path_max), upper]) == "image.unsafe_layer"
    _untouched(tmp_path, outside)


def test_a_hard_link_past_path_max_cannot_bring_a_host_file_in(
    tmp_path: Path, outside: Path
) -> None:
    upper = _tar(_entry("stolen", tarfile.LNKTYPE, link="escape/secret"))
    assert _refused(tmp_path, [_tar(_past_path_max), upper]) == "image.unsafe_layer"
    _untouched(tmp_path, outside)


@pytest.mark.parametrize(
    "entries",
    [
        # a hard link to an absolute path (the host's file, were it followed)
        [("stolen", "hard", "/etc/hostname")],
        # a hard link through `..` above the root
        [("stolen", "hard", "../outside/secret")],
        # relative links whose `..` climb above the root, judged where they are
        [("up", "link", "../outside")],
        [("a/", "dir", ""), ("a/b/", "dir", ""), ("a/b/up", "link", "../../../outside")],
        # a member below an absolute link (the host would resolve it from its root)
        [("etc", "link", "/"), ("etc/passwd", "file", "x")],
        # a hard link to nothing in the image
        [("stolen", "hard", "missing")],
        # a hard link to a folder
        [("a/", "dir", ""), ("stolen", "hard", "a")],
        # a file named as the root, whiteouts naming `..` and `.`
        [(".", "file", "x")],
        [("a/", "dir", ""), ("a/.wh...", "file", "")],
        [("a/", "dir", ""), ("a/.wh..", "file", "")],
        # a name longer than PATH_MAX
        [("/".join(["n" * 200] * 21), "file", "x")],
        # an absolute hard link, even to a file the image has
        [("etc/", "dir", ""), ("etc/hostname", "file", "x"), ("stolen", "hard", "/etc/hostname")],
        # a hard link into a folder that is not there
        [("stolen", "hard", "nodir/file")],
        # more links in one lookup than the kernel follows
        [
            ("l0", "dir", ""),
            *[(f"l{i}", "link", f"l{i - 1}") for i in range(1, 42)],
            ("l41/f", "file", "x"),
        ],
    ],
)
def test_links_and_names_that_lead_out_are_refused(
    tmp_path: Path, outside: Path, entries: list[tuple[str, str, str]]
) -> None:
    kinds = {"hard": tarfile.LNKTYPE, "link": tarfile.SYMTYPE, "dir": tarfile.DIRTYPE}
    adders = [
        _entry(name, tarfile.REGTYPE, data=value.encode())
        if kind == "file"
        else _entry(name, kinds[kind], link=value)
        for name, kind, value in entries
    ]
    assert _refused(tmp_path, [_tar(*adders)]) == "image.unsafe_layer"
    _untouched(tmp_path, outside)


@pytest.mark.parametrize(
    "entries",
    [
        # a file deeper than the depth limit, its folders made on the way
        [("/".join(["d"] * 200) + "/f", "file", "x")],
        # a lookup of more than 512 steps (a link of 600 `./`)
        [("a/", "dir", ""), ("s", "link", "./" * 600 + "a"), ("s/f", "file", "x")],
    ],
)
def test_lookups_past_their_bounds_are_too_large(
    tmp_path: Path, entries: list[tuple[str, str, str]]
) -> None:
    kinds = {"link": tarfile.SYMTYPE, "dir": tarfile.DIRTYPE}
    adders = [
        _entry(name, tarfile.REGTYPE, data=value.encode())
        if kind == "file"
        else _entry(name, kinds[kind], link=value)
        for name, kind, value in entries
    ]
    assert _refused(tmp_path, [_tar(*adders)]) == "image.too_large"


def test_whiteouts_under_a_link_to_the_host_are_refused_or_do_nothing(
    tmp_path: Path, outside: Path
) -> None:
    lower = layer([("var", "link", str(outside)), ("opt", "link", str(outside / "sub"))])
    # Through the absolute link: refused, not judged from the host's root.
    assert _refused(tmp_path, [lower, layer([("var/.wh.victim", "file", b"")])]) == (
        "image.unsafe_layer"
    )
    assert _refused(tmp_path, [lower, layer([("var/sub/.wh..wh..opq", "file", b"")])]) == (
        "image.unsafe_layer"
    )
    _untouched(tmp_path, outside)
    # The link itself made opaque: not a folder of the image, nothing emptied.
    rootfs = _pull(tmp_path, [lower, layer([("opt/.wh..wh..opq", "file", b"")])])
    assert (rootfs / "opt").readlink() == outside / "sub"
    _untouched(tmp_path, outside)


def test_links_inside_the_image_are_followed_and_kept(tmp_path: Path) -> None:
    lower = layer(
        [
            ("usr/", "dir", b""),
            ("usr/lib/", "dir", b""),
            ("lib", "link", "usr/lib"),
            ("etc/", "dir", b""),
            ("etc/alt", "link", "/usr/lib/x"),
            ("usr/lib/gone", "file", "1"),
            ("usr/lib/cache/", "dir", b""),
            ("usr/lib/cache/old", "file", "1"),
        ]
    )
    upper = _tar(
        _entry("usr/lib/sh", tarfile.SYMTYPE, link="../bin"),  # `..` inside the image
        _entry("usr/lib/sh/tool", tarfile.REGTYPE, data=b"4"),
        _entry("top", tarfile.SYMTYPE, link="usr/../etc"),
        _entry("lib/new", tarfile.REGTYPE, data=b"2"),  # written through the relative link
        _entry("lib/.wh.gone", tarfile.REGTYPE),
        _entry("lib/cache/.wh..wh..opq", tarfile.REGTYPE),
        _entry("lib/hard", tarfile.LNKTYPE, link="usr/lib/new"),
        _entry("./a/../b", tarfile.REGTYPE, data=b"3"),
    )
    rootfs = _pull(tmp_path, [lower, upper])
    assert (rootfs / "usr/lib/new").read_text() == "2"
    assert sorted(p.name for p in (rootfs / "usr/lib").iterdir()) == ["cache", "hard", "new", "sh"]
    assert list((rootfs / "usr/lib/cache").iterdir()) == []
    assert (rootfs / "usr/lib/hard").stat().st_ino == (rootfs / "usr/lib/new").stat().st_ino
    assert (rootfs / "etc/alt").readlink() == Path("/usr/lib/x")
    assert (rootfs / "b").read_text() == "3"
    assert (rootfs / "usr/bin/tool").read_text() == "4"
    assert (rootfs / "top").readlink() == Path("usr/../etc")


def test_a_folder_whited_out_and_made_again_is_a_new_folder(tmp_path: Path) -> None:
    lower = layer(
        [
            ("a/", "dir", b""),
            ("a/b/", "dir", b""),
            ("a/b/old", "file", "1"),
            ("a/b/c/", "dir", b""),
            ("a/b/c/x", "file", "1"),
        ]
    )
    upper = layer([("a/b/.wh.c", "file", b""), (".wh.a", "file", b""), ("a/b/new", "file", "2")])
    # An opaque folder holding names the clean-up itself lifts folders to.
    lifted = layer(
        [
            ("q/", "dir", b""),
            ("q/.fd-rm-1/", "dir", b""),
            ("q/.fd-rm-1/y/", "dir", b""),
            ("q/.fd-rm-1/y/z", "file", "1"),
            ("q/x/", "dir", b""),
            ("q/x/y/", "dir", b""),
        ]
    )
    emptied = layer([("q/.wh..wh..opq", "file", b"")])
    replaced = layer([("x", "file", "old"), ("y", "file", "new")])
    relinked = _tar(_entry("x", tarfile.LNKTYPE, link="y"))
    rootfs = _pull(tmp_path, [lower, upper, lifted, emptied, replaced, relinked])
    assert [p.name for p in (rootfs / "a/b").iterdir()] == ["new"]
    assert list((rootfs / "q").iterdir()) == []
    assert (rootfs / "x").read_text() == "new"  # the hard link replaced the file


def test_a_member_below_a_file_is_refused_as_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(LaunchError) as caught:
        _pull(tmp_path, [layer([("etc", "file", "x")]), layer([("etc/passwd", "file", "y")])])
    assert caught.value.code == "image.unsafe_layer"
    assert "etc is not a folder" in caught.value.message


def test_modes_are_cleaned_and_owners_not_applied(tmp_path: Path) -> None:
    def owned(name: str, kind: bytes, mode: int, data: bytes = b"") -> Add:
        def add(tar: tarfile.TarFile) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.size, info.uid, info.gid = kind, mode, len(data), 4242, 4242
            tar.addfile(info, io.BytesIO(data) if data else None)

        return add

    before = os.umask(0o077)  # folders are 0755 whatever the umask
    try:
        rootfs = _pull(
            tmp_path,
            [
                _tar(
                    owned("tmp", tarfile.DIRTYPE, 0o1777),
                    owned("tmp/suid", tarfile.REGTYPE, 0o6777, b"#!"),
                    owned("tmp/plain", tarfile.REGTYPE, 0o666, b"x"),
                    owned("tmp/private", tarfile.REGTYPE, 0o400, b"x"),
                    owned("tmp/made/by/name", tarfile.REGTYPE, 0o644, b"x"),
                    _entry("tmp/hard", tarfile.LNKTYPE, link="tmp/suid", mode=0o600),
                )
            ],
        )
    finally:
        os.umask(before)
    modes = {p.name: p.lstat().st_mode & 0o7777 for p in (rootfs / "tmp").iterdir()}
    # A hard link is the file it links: one inode, that file's mode.
    assert modes == {"suid": 0o755, "plain": 0o644, "private": 0o600, "made": 0o755, "hard": 0o755}
    assert (rootfs / "tmp").stat().st_mode & 0o7777 == 0o755
    assert (rootfs / "tmp/made/by").stat().st_mode & 0o7777 == 0o755
    assert {p.lstat().st_uid for p in (rootfs / "tmp").iterdir()} == {os.getuid()}


def test_a_tree_nested_past_the_depth_limit_is_refused_not_a_recursion_error(
    tmp_path: Path,
) -> None:
    # 1,100 folders: the old unpacker's checks grew with depth cubed, and its
    # tree digest recursed once per level.
    names = ["/".join(["d"] * depth) for depth in range(1, 1101)]
    deep = _tar(*[_entry(name, tarfile.DIRTYPE, mode=0o755) for name in names])
    assert _refused(tmp_path, [deep]) == "image.too_large"


def test_a_tree_as_deep_as_allowed_unpacks_and_hashes(tmp_path: Path) -> None:
    names = ["/".join(["d"] * depth) for depth in range(1, MAX_DEPTH + 1)]
    adders = [_entry(name, tarfile.DIRTYPE, mode=0o755) for name in names]
    rootfs = _pull(tmp_path, [_tar(*adders, _entry(names[-1] + "/f", tarfile.REGTYPE, data=b"x"))])
    assert (rootfs / names[-1] / "f").read_text() == "x"
    cache = ImageCache(tmp_path / "cache")
    (entry,) = cache.entries()
    assert cache.verify(entry["pinned"]).tree.startswith("sha256:")


def test_a_cached_tree_nested_deeper_than_anything_unpacked_is_listed_and_refused(
    tmp_path: Path,
) -> None:
    rootfs = _pull(tmp_path, [layer([("f", "file", "x")])])
    try:
        _nest(rootfs, 1500)  # planted in the cache on disk, past what recursion reaches
        cache = ImageCache(tmp_path / "cache")
        (entry,) = cache.entries()  # no RecursionError
        with pytest.raises(LaunchError) as caught:
            cache.verify(entry["pinned"])
        assert caught.value.code == "image.cache_corrupt"
        assert cache.prune() == [entry["digest"]]
        assert [p.name for p in (tmp_path / "cache" / "sha256").iterdir() if p.is_dir()] == []
    finally:
        remove_path(tmp_path / "cache")  # a tree this deep breaks pytest's own clean-up


def _nest(top: Path, depth: int) -> None:
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def test_the_pull_deadline_also_ends_unpacking(tmp_path: Path) -> None:
    blob = tmp_path / "layer"
    blob.write_bytes(layer([("f", "file", "x")]))
    with pytest.raises(LaunchError) as caught:
        unpack([(blob, "")], tmp_path / "rootfs", deadline=time.monotonic() - 1)
    assert caught.value.code == "image.pull_timeout"


def _pax_header(size: int) -> bytes:
    """The raw blocks of one PAX extended header of about `size` bytes."""
    raw = _tar(_entry("f", tarfile.REGTYPE, data=b"x"))
    info = tarfile.TarInfo("f")
    info.pax_headers = {"comment": "c" * size}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info)
    whole = buffer.getvalue()
    assert whole[156:157] == tarfile.XHDTYPE and raw
    length = int(whole[124:136].strip(b"\0 ") or b"0", 8)
    return whole[: 512 + (length + 511) // 512 * 512]


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ([_pax_header(70 << 10)], "image.too_large"),  # one PAX header over 64 KiB
        ([_pax_header(60 << 10)] * 20, "image.too_large"),  # 1.2 MiB of headers for one member
    ],
)
def test_extended_headers_are_bounded(tmp_path: Path, headers: list[bytes], code: str) -> None:
    member = _tar(_entry("f", tarfile.REGTYPE, data=b"x"))
    assert _refused(tmp_path, [b"".join(headers) + member]) == code


def test_pax_digit_runs_that_python_parses_in_quadratic_time_are_refused(tmp_path: Path) -> None:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("f")
        info.pax_headers = {"comment": "7" * 20_000}
        tar.addfile(info)

    assert _refused(tmp_path, [_tar(add)]) == "image.unsafe_layer"
    ordinary = _tar(lambda tar: _entry("f", tarfile.REGTYPE, data=b"x")(tar))
    assert (_pull(tmp_path, [ordinary]) / "f").read_text() == "x"


def test_unpacking_a_deep_tree_looks_each_folder_up_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every member one folder deeper than the last: the old checks walked
    # every component of every name (quadratic, and `realpath` made it cubic).
    names = ["/".join(["d"] * depth) for depth in range(1, MAX_DEPTH + 1)]
    adders = [_entry(name, tarfile.DIRTYPE, mode=0o755) for name in names]
    adders += [_entry(name + "/f", tarfile.REGTYPE, data=b"x") for name in names]
    blob = tmp_path / "layer"
    blob.write_bytes(_tar(*adders))
    calls = 0
    real_open, real_stat = os.open, os.stat

    def counted_open(*args: Any, **kwargs: Any) -> int:
        nonlocal calls
        calls += 1
        return real_open(*args, **kwargs)

    def counted_stat(*args: Any, **kwargs: Any) -> os.stat_result:
        nonlocal calls
        calls += 1
        return real_stat(*args, **kwargs)

    monkeypatch.setattr(os, "open", counted_open)
    monkeypatch.setattr(os, "stat", counted_stat)
    unpack([(blob, "")], tmp_path / "rootfs")
    monkeypatch.undo()
    assert calls <= 4 * len(adders) + 20


def _raw_pax(data: bytes) -> Add:
    """A PAX extended header holding exactly `data`, before a file `f`."""

    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("PaxHeaders/f")
        info.type, info.size = tarfile.XHDTYPE, len(data)
        tar.addfile(info, io.BytesIO(data))
        _entry("f", tarfile.REGTYPE, data=b"x")(tar)

    return add


@pytest.mark.parametrize(
    "records",
    [
        b"99 path=x\n",  # longer than the header
        b"5 path=x\n",  # shorter than its record
        b"ab path=x\n",  # not a length
        b"10 pathxy\n",  # no `=`
        b"12 path=xyz\n10 pathxy\n",  # a good record, then a bad one
    ],
)
def test_malformed_pax_records_are_refused(tmp_path: Path, records: bytes) -> None:
    assert _refused(tmp_path, [_tar(_raw_pax(records))]) == "image.unsafe_layer"


def test_well_formed_pax_records_are_read(tmp_path: Path) -> None:
    rootfs = _pull(tmp_path, [_tar(_raw_pax(b"12 path=xyz\n"))])
    assert sorted(p.name for p in rootfs.iterdir()) == ["xyz"]


def _negative_size(raw: bytes, offset: int, size: int) -> bytes:
    """`raw` with the header at `offset` declaring `size` (base-256, as tar
    writes numbers that do not fit in octal), its checksum made right."""
    block = bytearray(raw[offset : offset + 512])
    block[124:136] = b"\xff" + (256**11 + size).to_bytes(11, "big")
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return raw[:offset] + bytes(block) + raw[offset + 512 :]


@pytest.mark.parametrize("kind", ["link", "pax"])
def test_a_negative_size_gets_no_credit_and_moves_nothing_backwards(
    tmp_path: Path, kind: str
) -> None:
    # A link declaring -1 TiB would lower what the layers count as unpacked;
    # a PAX header declaring -512 bytes would send tarfile back to re-read
    # itself (or read the whole layer into memory).
    if kind == "link":
        raw = _negative_size(layer([("l", "link", "x")]), 0, -(1 << 40))
    else:
        raw = _negative_size(_tar(_raw_pax(b"12 path=xyz\n")), 0, -512)
    assert _refused(tmp_path, [raw]) == "image.unsafe_layer"


def _stream_bomb(headers: int, data: int) -> bytes:
    """Members that declare nothing behind 60 KiB PAX headers, then one with
    `data` bytes, then one whose data is cut off (refused if ever reached)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i in range(headers):
            info = tarfile.TarInfo(f"h{i}")
            info.pax_headers = {"comment": "c" * (60 << 10)}
            tar.addfile(info)
        _entry("data", tarfile.REGTYPE, data=bytes(data))(tar)
        _entry("cut", tarfile.REGTYPE, data=b"x" * 4096)(tar)
    raw = buffer.getvalue()
    return raw[: raw.rindex(b"x" * 4096) + 100]


@pytest.mark.parametrize(
    ("headers", "data"),
    [(40, 0), (15, 300 << 10)],  # read past the bound; skipped (sought) past it
)
def test_the_stream_stops_at_the_unpacked_bound_before_the_end_of_the_layer(
    tmp_path: Path, headers: int, data: int
) -> None:
    blob = tmp_path / "layer"
    blob.write_bytes(_stream_bomb(headers, data))
    limits = PullLimits(max_unpacked_bytes=1 << 20)
    with pytest.raises(LaunchError) as caught:
        unpack([(blob, "")], tmp_path / "rootfs", limits)
    # too_large: refused as the bound passed, not when the cut-off member was reached
    assert caught.value.code == "image.too_large", caught.value
