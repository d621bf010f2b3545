"""Publish copies a composed image from an OCI layout on disk (issue 32):
the layout is bytes that may have changed since they were verified, so the
manifest and each blob must be a regular file (a link is not followed) of
its declared size and digest, or nothing is pushed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from flightdeck.flightplan import FlightPlanError
from flightdeck.flightplan.publish._copy import copy_layout
from flightdeck.flightplan.publish._layout import LAYOUT, LayoutWriter
from flightdeck.flightplan.registry._images import parse_image_ref


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _layout(folder: Path) -> tuple[str, dict[str, Path]]:
    blobs = folder / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    config, layer = b'{"os":"linux"}', b"a layer of bytes"
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": _digest(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": _digest(layer),
                    "size": len(layer),
                }
            ],
        }
    ).encode()
    paths = {}
    for name, data in (("config", config), ("layer", layer), ("manifest", manifest)):
        paths[name] = blobs / _digest(data)[7:]
        paths[name].write_bytes(data)
    return _digest(manifest), paths


def _copy(folder: Path, digest: str) -> LayoutWriter:
    writer = LayoutWriter()
    copy_layout(writer, folder, digest, parse_image_ref(f"{LAYOUT}/plans"), lambda line: None)
    return writer


def test_a_layout_is_copied_blob_by_blob(tmp_path: Path) -> None:
    digest, paths = _layout(tmp_path)
    writer = _copy(tmp_path, digest)
    assert set(writer.blobs) == {_digest(p.read_bytes()) for p in paths.values()}


@pytest.mark.parametrize("attack", ["link", "grown", "changed", "fifo", "missing"])
def test_a_tampered_layout_is_refused(tmp_path: Path, attack: str) -> None:
    digest, paths = _layout(tmp_path)
    layer = paths["layer"]
    if attack == "link":
        secret = tmp_path / "secret"
        secret.write_bytes(layer.read_bytes())  # even the right bytes, through a link
        layer.unlink()
        os.symlink(secret, layer)
    elif attack == "grown":
        layer.write_bytes(layer.read_bytes() + b"\0" * 4096)
    elif attack == "changed":
        layer.write_bytes(layer.read_bytes().upper())
    elif attack == "fifo":
        layer.unlink()
        os.mkfifo(layer)
    else:
        layer.unlink()
    with pytest.raises(FlightPlanError) as caught:
        _copy(tmp_path, digest)
    assert caught.value.code == "publish.image_invalid"


def test_a_manifest_over_the_limit_or_of_another_digest_is_refused(tmp_path: Path) -> None:
    digest, paths = _layout(tmp_path)
    paths["manifest"].write_bytes(b" " * (5 << 20))
    with pytest.raises(FlightPlanError) as caught:
        _copy(tmp_path, digest)
    assert caught.value.code == "publish.image_invalid"
    with pytest.raises(FlightPlanError) as other:
        _copy(tmp_path, "sha256:" + "0" * 64)
    assert other.value.code == "publish.image_invalid"
