"""A cached image's folder is also a standard OCI image layout.

Beside the cache's own records (`pinned.json`, `manifest.json`, `rootfs/`,
`ready.json`) every image stored since issue 32 has `oci-layout`,
`index.json` and its blobs under `blobs/sha256/<hex>`, so `umoci`, `skopeo
copy oci:…` and `flightdeck publish` read it as any layout. `index.json`
names the one manifest the rootfs was unpacked from (for a pinned index, the
platform manifest chosen from it, whose blobs are all here; the other
platforms' are not, so the index itself is kept as a blob but not named),
tagged `latest`. A folder cached before has its blobs at `blobs/<hex>`
and no `oci-layout`: it is still read there, and is a layout again once
pruned and pulled anew.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

LAYOUT_FILE = "oci-layout"
INDEX_FILE = "index.json"
REF_NAME = "org.opencontainers.image.ref.name"
TAG = "latest"
_INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
_MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"


def blobs_dir(folder: Path) -> Path:
    """Where `folder`'s blobs are: `blobs/sha256` in a layout, `blobs` in
    an entry cached before the cache was one."""
    layout = folder / "blobs" / "sha256"
    if layout.is_dir() or not (folder / "blobs").is_dir():
        return layout
    return folder / "blobs"


def blob_file(folder: Path, hexdigest: str) -> Path:
    return blobs_dir(folder) / hexdigest


def write_layout(folder: Path, manifest: bytes, media_type: str, pinned: bytes) -> None:
    """Make `folder` (whose blobs are already under `blobs/sha256`) a layout:
    the manifest and the pinned bytes as blobs, `index.json`, `oci-layout`
    last (its presence is what says the folder is one)."""
    import hashlib

    blobs = folder / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(manifest).hexdigest()
    for name, data in (("manifest.json", manifest), ("pinned.json", pinned)):
        target = blobs / hashlib.sha256(data).hexdigest()
        if not target.exists():
            _link_or_copy(folder / name, target)
    index = {
        "schemaVersion": 2,
        "mediaType": _INDEX_TYPE,
        "manifests": [
            {
                # An OCI manifest may leave out its own mediaType; a descriptor may not.
                "mediaType": media_type or _MANIFEST_TYPE,
                "digest": "sha256:" + digest,
                "size": len(manifest),
                "annotations": {REF_NAME: TAG},
            }
        ],
    }
    (folder / INDEX_FILE).write_bytes(_canonical(index))
    (folder / LAYOUT_FILE).write_bytes(_canonical({"imageLayoutVersion": "1.0.0"}))


def _canonical(data: object) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _link_or_copy(source: Path, target: Path) -> None:
    # The records and their blob are the same bytes, never rewritten.
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


__all__ = ["INDEX_FILE", "LAYOUT_FILE", "TAG", "blob_file", "blobs_dir", "write_layout"]
