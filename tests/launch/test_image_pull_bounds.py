"""Every pull bounded, against a registry on loopback that misbehaves.

The registry (`_rogue_registry`) is a real HTTP server: it drips bytes,
redirects, serves a huge manifest or a 10,000-layer one, and hands out
tokens that are not tokens. The limits come from `[images]` in the user's
configuration, as a launch reads them; each refusal is its own code, never
a traceback, and nothing is left in the cache.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import platform
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.flightplan import FlightPlanError, OciResolver
from flightdeck.launch import LaunchError
from flightdeck.launch.image._cache import CachedImage, ImageCache

from ._image import layer
from ._rogue_registry import INDEX, MANIFEST, Rogue, digest, manifest, rogue_registry


@pytest.fixture
def rogue() -> Iterator[Rogue]:
    with rogue_registry() as server:
        yield server


def _configure(home: Path, text: str) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text("[images]\n" + text)


def _ensure(tmp_path: Path, pinned: str) -> CachedImage:
    return ImageCache(tmp_path / "cache").ensure(pinned, OciResolver)


def _refused(tmp_path: Path, pinned: str) -> LaunchError:
    with pytest.raises(LaunchError) as caught:
        _ensure(tmp_path, pinned)
    left = [p.name for p in (tmp_path / "cache" / "sha256").iterdir() if p.suffix != ".lock"]
    assert left == []
    return caught.value


def _blob_hits(rogue: Rogue) -> int:
    return sum(n for path, n in rogue.hits.items() if "/blobs/" in path)


def _file_layer(name: str, size: int, *, gz: bool = False, data: bytes | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size = size
        tar.addfile(info, io.BytesIO(data if data is not None else bytes(size)))
    raw = buffer.getvalue()
    return gzip.compress(raw, compresslevel=1, mtime=0) if gz else raw


@pytest.mark.parametrize("slow", ["manifest", "layer"])
def test_a_registry_dripping_bytes_ends_at_the_pull_deadline(
    tmp_path: Path, fd_home: Path, rogue: Rogue, slow: str
) -> None:
    # A byte every 0.2 s: each read is quick, the pull never ends. The old
    # client's 10 s timeout was per read; the drip stops after 15 s here
    # only so that a client without a deadline finishes at all.
    _configure(fd_home, "pull_timeout = 2\n")
    big = _file_layer("f", 4096)
    pinned, body = rogue.image([(big, False)])
    rogue.drip[digest(body) if slow == "manifest" else digest(big)] = 0.2
    error = _refused(tmp_path, pinned)
    assert error.code == "image.pull_timeout", error


def test_a_manifest_an_index_names_is_judged_by_its_declared_size(
    tmp_path: Path, rogue: Rogue
) -> None:
    config = rogue.add(b'{"os": "linux"}')
    padded = json.loads(manifest([]))
    padded["annotations"] = {"pad": "x" * (6 << 20)}  # 6 MiB: over the 4 MiB every level has
    body = json.dumps(padded).encode()
    assert config in body.decode()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    index = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": INDEX,
            "manifests": [
                {
                    "mediaType": MANIFEST,
                    "digest": rogue.add(body),
                    "size": len(body),
                    "platform": {"os": "linux", "architecture": arch},
                }
            ],
        }
    ).encode()
    error = _refused(tmp_path, f"{rogue.address}/acme/tool@{rogue.add(index)}")
    assert error.code == "image.too_large", error
    assert rogue.hits[f"/v2/acme/tool/manifests/{digest(body)}"] == 0


def test_a_pinned_manifest_over_4_mib_is_too_large(tmp_path: Path, rogue: Rogue) -> None:
    padded = json.loads(manifest([]))
    padded["annotations"] = {"pad": "x" * (5 << 20)}
    pinned = f"{rogue.address}/acme/tool@{rogue.add(json.dumps(padded).encode())}"
    assert _refused(tmp_path, pinned).code == "image.too_large"


def test_a_config_over_4_mib_is_too_large_before_it_is_fetched(
    tmp_path: Path, rogue: Rogue
) -> None:
    config = b'{"os": "linux", "pad": "' + b"x" * (5 << 20) + b'"}'
    body = manifest([], config)
    rogue.add(config)
    error = _refused(tmp_path, f"{rogue.address}/acme/tool@{rogue.add(body)}")
    assert error.code == "image.too_large", error
    assert _blob_hits(rogue) == 0


def test_ten_thousand_layers_are_refused_before_any_blob_is_fetched(
    tmp_path: Path, rogue: Rogue
) -> None:
    one = layer([("f", "file", "x")])
    pinned, _ = rogue.image([(one, False)] * 10_000)
    error = _refused(tmp_path, pinned)
    assert error.code == "image.too_many_layers", error
    assert _blob_hits(rogue) == 0


def test_the_bytes_a_manifest_declares_are_bounded_before_fetching(
    tmp_path: Path, fd_home: Path, rogue: Rogue
) -> None:
    _configure(fd_home, "max_download_mib = 1\n")
    pinned, _ = rogue.image([(_file_layer("f", 2 << 20, data=os.urandom(2 << 20)), False)])
    error = _refused(tmp_path, pinned)
    assert error.code == "image.too_large", error
    assert _blob_hits(rogue) == 0


@pytest.mark.parametrize(
    ("setting", "blob"),
    [
        # 64 MiB of zeros in a 64 KiB gzip layer
        ("max_unpacked_mib = 8", lambda: _file_layer("zeros", 64 << 20, gz=True)),
        ("max_entry_mib = 1", lambda: _file_layer("two", 2 << 20, gz=True)),
        ("max_entries = 50", lambda: layer([(f"f{i}", "file", "x") for i in range(60)])),
    ],
)
def test_what_a_layer_unpacks_to_is_bounded(
    tmp_path: Path, fd_home: Path, rogue: Rogue, setting: str, blob: object
) -> None:
    _configure(fd_home, setting + "\n")
    data = blob()  # type: ignore[operator]
    pinned, _ = rogue.image([(data, data[:2] == b"\x1f\x8b")])
    error = _refused(tmp_path, pinned)
    assert error.code == "image.too_large", error


def _sparse_layer(size: int, regions: list[tuple[int, bytes]]) -> bytes:
    """A GNU sparse member (PAX format 0.1) of `size` bytes holding only
    `regions`: Python's tarfile reads these but cannot write them."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("GNUSparseFile.0/big")
        stored = b"".join(data for _, data in regions)
        info.size = len(stored)
        info.pax_headers = {
            "GNU.sparse.name": "big",
            "GNU.sparse.size": str(size),
            "GNU.sparse.map": ",".join(f"{offset},{len(data)}" for offset, data in regions),
        }
        tar.addfile(info, io.BytesIO(stored))
    return buffer.getvalue()


def test_a_sparse_member_is_judged_by_its_declared_size(tmp_path: Path, rogue: Rogue) -> None:
    # One byte stored, 1 TiB declared: the old unpacker made the file and
    # then hashed a terabyte of zeros.
    pinned, _ = rogue.image([(_sparse_layer(1 << 40, [((1 << 40) - 1, b"x")]), False)])
    error = _refused(tmp_path, pinned)
    assert error.code == "image.too_large", error
    assert "big declares 1,099,511,627,776 bytes" in error.message


@pytest.mark.parametrize(
    "regions",
    [
        [(8192, b"b"), (0, b"a")],  # unsorted
        [(0, b"aaaa"), (2, b"bb")],  # overlapping
        [(4096 - 2, b"abc")],  # past the file's end
    ],
)
def test_a_malformed_sparse_map_is_refused(
    tmp_path: Path, rogue: Rogue, regions: list[tuple[int, bytes]]
) -> None:
    pinned, _ = rogue.image(
        [(_sparse_layer(4096 * 4 if len(regions) > 1 else 4096, regions), False)]
    )
    assert _refused(tmp_path, pinned).code == "image.unsafe_layer"


def test_a_sparse_map_claiming_more_data_than_stored_is_refused(
    tmp_path: Path, rogue: Rogue
) -> None:
    data = _sparse_layer(1 << 20, [(0, b"x" * 100)])  # 100 bytes stored, one 512-byte block
    claimed = data.replace(b"GNU.sparse.map=0,100", b"GNU.sparse.map=0,999")
    assert claimed != data
    pinned, _ = rogue.image([(claimed, False)])
    assert _refused(tmp_path, pinned).code == "image.unsafe_layer"


def test_headers_count_against_the_unpacked_limit(
    tmp_path: Path, fd_home: Path, rogue: Rogue
) -> None:
    # Members that declare nothing, each behind a 60 KiB PAX header: 2.4 MiB
    # of stream that no declared size counts.
    _configure(fd_home, "max_unpacked_mib = 1\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i in range(40):
            info = tarfile.TarInfo(f"f{i}")
            info.pax_headers = {"comment": "c" * (60 << 10)}
            tar.addfile(info)
    pinned, _ = rogue.image([(buffer.getvalue(), False)])
    assert _refused(tmp_path, pinned).code == "image.too_large"


def test_a_sparse_member_within_bounds_keeps_its_holes(tmp_path: Path, rogue: Rogue) -> None:
    size = 64 << 20
    pinned, _ = rogue.image([(_sparse_layer(size, [(4096, b"a" * 10), (size - 3, b"end")]), False)])
    big = _ensure(tmp_path, pinned).rootfs / "big"
    assert big.stat().st_size == size
    assert big.stat().st_blocks * 512 < 1 << 20  # not 64 MiB written
    with big.open("rb") as handle:
        assert handle.read(4106) == bytes(4096) + b"a" * 10
        handle.seek(size - 3)
        assert handle.read() == b"end"


@pytest.mark.parametrize(
    "answer",
    [
        b"<html><body>Sign in</body></html>",  # HTML: not JSON
        b"[1, 2, 3]",  # JSON, not an object
        b'{"token": 42}',
        json.dumps({"token": "t" * (1 << 20)}).encode(),  # 1 MiB: over the token bound
        b'{"token": "caf\\u00e9\\r\\nX-Injected: 1"}',  # not a header value
    ],
)
def test_a_token_endpoint_answering_no_token_is_bad_token(
    tmp_path: Path, rogue: Rogue, answer: bytes
) -> None:
    pinned, _ = rogue.image([(layer([("f", "file", "x")]), False)])
    rogue.token_answer = answer
    rogue.token_type = "text/html" if answer.startswith(b"<") else "application/json"
    error = _refused(tmp_path, pinned)
    assert error.code == "image.bad_token", error
    assert _blob_hits(rogue) == 0


def test_freeze_refuses_a_token_endpoint_answering_html(rogue: Rogue) -> None:
    rogue.blobs["1"] = manifest([])
    rogue.token_answer = b"<html>Sign in</html>"
    resolver = OciResolver()
    try:
        with pytest.raises(FlightPlanError) as caught:
            resolver.resolve(f"{rogue.address}/acme/tool:1")
    finally:
        resolver.close()
    assert caught.value.code == "freeze.registry_refused"


def test_a_loopback_registry_cannot_redirect_a_pull_off_loopback(
    tmp_path: Path, rogue: Rogue
) -> None:
    # 0.0.0.0 is not a loopback address by name, yet the kernel connects it
    # to this machine: the test sees where the old client went, and no
    # request leaves the machine.
    blob = layer([("f", "file", "x")])
    pinned, _ = rogue.image([(blob, False)])
    with rogue_registry() as elsewhere:
        elsewhere.add(blob)
        port = elsewhere.address.rsplit(":", 1)[1]
        rogue.redirect[digest(blob)] = f"http://0.0.0.0:{port}/v2/acme/tool/blobs/{digest(blob)}"
        error = _refused(tmp_path, pinned)
        assert error.code == "image.redirect_refused", error
        assert sum(elsewhere.hits.values()) == 0


def test_freeze_does_not_follow_a_loopback_registry_off_loopback(rogue: Rogue) -> None:
    with rogue_registry() as elsewhere:
        elsewhere.blobs["1"] = manifest([])
        port = elsewhere.address.rsplit(":", 1)[1]
        rogue.redirect["1"] = f"http://0.0.0.0:{port}/v2/acme/tool/manifests/1"
        resolver = OciResolver()
        try:
            with pytest.raises(FlightPlanError) as caught:
                resolver.resolve(f"{rogue.address}/acme/tool:1")
        finally:
            resolver.close()
        assert caught.value.code == "freeze.registry_refused"
        assert sum(elsewhere.hits.values()) == 0


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("max_layers = 0", "max_layers"),
        ("max_unpacked_mib = -1", "max_unpacked_mib"),
        ("max_entries = true", "max_entries"),
        ('pull_timeout = "soon"', "pull_timeout"),
        ("pull_timeout = nan", "pull_timeout"),
    ],
)
def test_a_bad_images_setting_is_config_invalid(
    tmp_path: Path, fd_home: Path, rogue: Rogue, text: str, key: str
) -> None:
    _configure(fd_home, text + "\n")
    pinned, _ = rogue.image([(layer([("f", "file", "x")]), False)])
    error = _refused(tmp_path, pinned)
    assert error.code == "config.invalid"
    assert f"[images] {key}" in error.message
    assert str(fd_home / "config" / "config.toml") in error.message


def test_a_config_file_that_is_not_toml_is_config_invalid(
    tmp_path: Path, fd_home: Path, rogue: Rogue
) -> None:
    _configure(fd_home, "max_layers = = 3\n")
    pinned, _ = rogue.image([(layer([("f", "file", "x")]), False)])
    assert _refused(tmp_path, pinned).code == "config.invalid"


def test_an_image_within_the_configured_limits_pulls(
    tmp_path: Path, fd_home: Path, rogue: Rogue
) -> None:
    _configure(
        fd_home,
        "max_layers = 2\nmax_download_mib = 1\nmax_unpacked_mib = 1\nmax_entry_mib = 1\n"
        "max_entries = 3\npull_timeout = 60\n",
    )
    first, second = layer([("a", "file", "1"), ("b", "file", "2")]), layer([("c", "file", "3")])
    pinned, _ = rogue.image([(first, False), (second, False)])
    rootfs = _ensure(tmp_path, pinned).rootfs
    assert sorted(p.name for p in rootfs.iterdir()) == ["a", "b", "c"]


def _index(rogue: Rogue, entries: list[tuple[str, str, bytes]]) -> str:
    """Serve an index of (os, architecture, manifest bytes); its pinned reference."""
    listed = [
        {
            "mediaType": MANIFEST,
            "digest": rogue.add(body),
            "size": len(body),
            "platform": {"os": os_name, "architecture": arch},
        }
        for os_name, arch, body in entries
    ]
    index = json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": listed}).encode()
    return f"{rogue.address}/acme/tool@{rogue.add(index)}"


def test_an_index_gives_the_linux_image_for_this_machine(tmp_path: Path, rogue: Rogue) -> None:
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    ours, theirs = layer([("ours", "file", "1")]), layer([("theirs", "file", "2")])
    for blob in (ours, theirs):
        rogue.add(blob)
    rogue.add(b'{"os": "linux"}')
    pinned = _index(
        rogue,
        [
            ("linux", "s390x", manifest([(theirs, False)])),
            ("windows", arch, manifest([(theirs, False)])),
            ("linux", arch, manifest([(ours, False)])),
        ],
    )
    rootfs = _ensure(tmp_path, pinned).rootfs
    assert [p.name for p in rootfs.iterdir()] == ["ours"]
    other = _index(rogue, [("linux", "s390x", manifest([]))])
    assert _refused(tmp_path / "second", other).code == ("image.unsupported")


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        json.dumps({"mediaType": MANIFEST, "config": {}, "layers": []}).encode(),
        json.dumps(
            {"mediaType": MANIFEST, "config": {"digest": "md5:abc", "size": 1}, "layers": []}
        ).encode(),
        json.dumps(
            {
                "mediaType": MANIFEST,
                "config": {"digest": "sha256:" + "a" * 64, "size": -1},
                "layers": [],
            }
        ).encode(),
        json.dumps(
            {
                "mediaType": MANIFEST,
                "config": {"digest": "sha256:" + "a" * 64, "size": True},
                "layers": [],
            }
        ).encode(),
        json.dumps({"mediaType": INDEX, "manifests": [{"platform": None}]}).encode(),
    ],
)
def test_a_manifest_that_is_not_one_is_bad_manifest(
    tmp_path: Path, rogue: Rogue, body: bytes
) -> None:
    error = _refused(tmp_path, f"{rogue.address}/acme/tool@{rogue.add(body)}")
    assert error.code == "image.bad_manifest", error
    assert _blob_hits(rogue) == 0


def test_manifests_are_asked_for_with_their_media_types(tmp_path: Path, rogue: Rogue) -> None:
    pinned, _ = rogue.image([(layer([("f", "file", "x")]), False)])
    rogue.require_accept = True  # answers 404 to a manifest request without OCI types in Accept
    assert (_ensure(tmp_path, pinned).rootfs / "f").read_text() == "x"


def test_pull_refuses_a_reference_without_a_digest(tmp_path: Path, rogue: Rogue) -> None:
    from flightdeck.launch.image._pull import pull

    with pytest.raises(LaunchError) as caught:
        pull(f"{rogue.address}/acme/tool:1", tmp_path, OciResolver())
    assert caught.value.code == "image.not_pinned"
    assert sum(rogue.hits.values()) == 0
