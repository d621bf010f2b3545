"""A cached image's folder is a standard OCI image layout (issue 32):
`oci-layout`, `index.json` naming the manifest the rootfs came from, every
blob under `blobs/sha256/`; a folder cached before (blobs at `blobs/<hex>`)
is still read and verified."""

from __future__ import annotations

import json
from pathlib import Path

from flightdeck.launch.image._cache import ImageCache

from ._image import layer, serve


def _cached(tmp_path: Path) -> tuple[ImageCache, str, Path]:
    pinned, resolver = serve([(layer([("etc/", "dir", b""), ("etc/a", "file", "a")]), False)])
    cache = ImageCache(tmp_path / "cache")
    return cache, pinned, cache.ensure(pinned, lambda: resolver).folder


def test_a_pulled_image_is_an_oci_layout(tmp_path: Path) -> None:
    _, pinned, folder = _cached(tmp_path)
    assert json.loads((folder / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    [entry] = json.loads((folder / "index.json").read_text())["manifests"]
    assert entry["digest"] == pinned.rpartition("@")[2]
    assert entry["annotations"] == {"org.opencontainers.image.ref.name": "latest"}
    manifest = (folder / "blobs" / "sha256" / entry["digest"][7:]).read_bytes()
    assert manifest == (folder / "manifest.json").read_bytes()
    data = json.loads(manifest)
    for blob in (data["config"], *data["layers"]):
        assert (folder / "blobs" / "sha256" / blob["digest"][7:]).stat().st_size == blob["size"]
    # umoci reads a composed one (test_compose.py): this double's config has no media type.


def test_an_entry_cached_before_the_layout_is_still_verified(tmp_path: Path) -> None:
    cache, pinned, folder = _cached(tmp_path)
    blobs = folder / "blobs"
    for blob in (blobs / "sha256").iterdir():
        blob.rename(blobs / blob.name)
    (blobs / "sha256").rmdir()
    (folder / "oci-layout").unlink()
    (folder / "index.json").unlink()
    assert cache.verify(pinned).tree
    assert cache.ensure(pinned).pulled is False
