"""Pulling and unpacking an image into the cache, against a registry double:
every blob's digest and size is checked, layers apply in order with whiteouts
and opaque directories, and nothing in a layer reaches outside the rootfs."""

from __future__ import annotations

import contextlib
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.launch import LaunchError
from flightdeck.launch.image._cache import ImageCache

from ._image import digest, layer, serve


def _ensure(tmp_path: Path, layers: list[tuple[bytes, bool]], **kw: dict[str, bytes]) -> Path:
    pinned, resolver = serve(layers, **kw)
    return ImageCache(tmp_path / "cache").ensure(pinned, lambda: resolver).rootfs


def _refused(tmp_path: Path, layers: list[tuple[bytes, bool]], **kw: dict[str, bytes]) -> str:
    with pytest.raises(LaunchError) as caught:
        _ensure(tmp_path, layers, **kw)
    left = [p for p in (tmp_path / "cache" / "sha256").iterdir() if p.suffix != ".lock"]
    assert left == []  # nothing half-cached
    return caught.value.code


def test_layers_apply_in_order_with_whiteouts_and_opaque_dirs(tmp_path: Path) -> None:
    lower = layer(
        [
            ("etc/", "dir", b""),
            ("etc/keep", "file", "1"),
            ("etc/gone", "file", "1"),
            ("var/", "dir", b""),
            ("var/cache/", "dir", b""),
            ("var/cache/old", "file", "1"),
            ("bin/", "dir", b""),
            ("bin/tool", "suid", "#!"),
            ("bin/sh", "link", "/bin/busybox"),
            ("dev-node", "char", b""),
        ]
    )
    upper = layer(
        [
            ("etc/.wh.gone", "file", b""),
            ("var/cache/.wh..wh..opq", "file", b""),
            ("var/cache/new", "file", "2"),
            ("etc/keep", "file", "2"),
        ],
        gz=True,
    )
    rootfs = _ensure(tmp_path, [(lower, False), (upper, True)])
    assert (rootfs / "etc" / "keep").read_text() == "2"
    assert not (rootfs / "etc" / "gone").exists()
    assert sorted(p.name for p in (rootfs / "var" / "cache").iterdir()) == ["new"]
    assert not (rootfs / "dev-node").exists()
    assert (rootfs / "bin" / "tool").stat().st_mode & (stat.S_ISUID | stat.S_ISGID) == 0
    assert (rootfs / "bin" / "sh").readlink() == Path("/bin/busybox")


@pytest.mark.parametrize(
    "entries",
    [
        [("../escaped", "file", "x")],
        [("a/../../escaped", "file", "x")],
        [("up", "link", "../../.."), ("up/escaped", "file", "x")],
        [("root", "link", "/"), ("root/escaped", "file", "x")],
        [("etc/", "dir", b""), ("etc/.wh...", "file", b"")],
        [("x/.wh.escaped/../../..", "file", b"")],
    ],
)
def test_nothing_reaches_outside_the_rootfs(
    tmp_path: Path, entries: list[tuple[str, str, bytes | str]]
) -> None:
    assert _refused(tmp_path, [(layer(entries), False)]) == "image.unsafe_layer"
    assert not (tmp_path / "escaped").exists() and not Path("/escaped").exists()
    assert (tmp_path / "cache").is_dir()


def test_a_link_left_by_a_lower_layer_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    lower = layer([("etc", "link", str(outside))])
    upper = layer([("etc/passwd", "file", "owned")])
    assert _refused(tmp_path, [(lower, False), (upper, False)]) == "image.unsafe_layer"
    assert list(outside.iterdir()) == []


def test_a_blob_of_another_size_or_digest_is_refused(tmp_path: Path) -> None:
    good = layer([("f", "file", "content")])
    longer = good + b"\0"
    flipped = bytes([good[0] ^ 1]) + good[1:]
    assert _refused(tmp_path, [(good, False)], lie={digest(good): longer}) == (
        "image.blob_mismatch"
    )
    assert _refused(tmp_path, [(good, False)], lie={digest(good): flipped}) == (
        "image.blob_mismatch"
    )


def test_a_cached_rootfs_changed_on_disk_is_refused(tmp_path: Path) -> None:
    pinned, resolver = serve([(layer([("f", "file", "content")]), False)])
    cache = ImageCache(tmp_path / "cache")
    rootfs = cache.ensure(pinned, lambda: resolver).rootfs
    assert cache.ensure(pinned, lambda: resolver).pulled is False
    (rootfs / "f").write_text("contenT")
    with pytest.raises(LaunchError) as caught:
        cache.ensure(pinned, lambda: resolver)
    assert caught.value.code == "image.cache_corrupt"


def test_an_unwritable_cache_is_an_error_value(tmp_path: Path) -> None:
    pinned, resolver = serve([(layer([("f", "file", "content")]), False)])
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(LaunchError) as caught:
        ImageCache(tmp_path / "file" / "images").ensure(pinned, lambda: resolver)
    assert caught.value.code == "image.cache_unwritable"


_PARTS = st.sampled_from(["a", "b", "..", ".", "", ".wh.a", ".wh..wh..opq", "c"])
_NAMES = st.lists(_PARTS, min_size=1, max_size=4).map("/".join)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_layers_never_write_outside_the_rootfs(tmp_path_factory: Any, data: Any) -> None:
    tmp = tmp_path_factory.mktemp("fuzz")
    outside = tmp / "outside"
    outside.mkdir()
    targets = st.sampled_from(["a", "../..", "../../outside", str(outside), "/", "b/../.."])
    entry = st.one_of(
        st.tuples(_NAMES, st.just("file"), st.just("x")),
        st.tuples(_NAMES, st.just("dir"), st.just(b"")),
        st.tuples(_NAMES, st.just("link"), targets),
    )
    layers = data.draw(st.lists(st.lists(entry, min_size=1, max_size=5), min_size=1, max_size=3))
    pinned, resolver = serve([(layer(items), False) for items in layers])
    with contextlib.suppress(LaunchError):
        ImageCache(tmp / "cache").ensure(pinned, lambda: resolver)
    assert sorted(p.name for p in tmp.iterdir()) == ["cache", "outside"]
    assert list(outside.iterdir()) == []


def test_a_link_named_through_dot_is_the_link_itself_not_a_recursion_error(
    tmp_path: Path,
) -> None:
    # Found by the fuzz test above: tarfile fell back to copying the link's
    # target, which was the link itself, until the interpreter's recursion
    # limit. `c/.` names `c`: the upper layers replace the file with a link.
    first = layer([("c", "file", "x"), ("c/.", "link", "/")])
    second = layer([("c/.", "link", "/")])
    rootfs = _ensure(tmp_path, [(first, False), (second, False)])
    assert (rootfs / "c").readlink() == Path("/")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_a_layer_that_is_not_a_tarball_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, [(b"not gzip at all", True)]) == "image.unsafe_layer"
    assert _refused(tmp_path, [(b"\x1f\x8b\x08\x00" + b"\x00" * 40, True)]) == "image.unsafe_layer"
