"""Copying the plan's image into the artifact's repository, by digest.

The lock pins the image's manifest digest; the copy fetches that manifest
from the source registry (refused unless its bytes have the pinned digest),
and for an index each platform manifest it names, itself by digest. Every
config and layer is fetched at most its declared size and checked against
its digest before it is uploaded; a blob the target already holds is
skipped, and one in another repository of the same registry is mounted
(no bytes move). Manifests are pushed by digest, children before the index,
so the target never names a blob or manifest it lacks.

A composed image (issue 32) is in no registry: it is copied from the OCI
layout the image cache keeps it in (`copy_layout`), read as bytes that may
have been changed since they were verified: the manifest and each blob must
be regular files (a link is not followed), no larger than the manifest limit
or the size the manifest declares, and exactly their digest, or nothing is
pushed (`publish.image_invalid`).
"""

from __future__ import annotations

import errno
import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flightdeck._bounded import read_regular_stat
from flightdeck._json import read_json
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.publish._artifact import Descriptor
from flightdeck.flightplan.registry._images import ImageRef, parse_image_ref
from flightdeck.flightplan.registry._oci import Fetched, OciClient

MANIFEST_LIMIT = 4 << 20  # the distribution spec's manifest size
MAX_ENTRIES = 256  # layers of a manifest, manifests of an index
_INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)


def copy_image(
    client: OciClient, pinned: str, target: ImageRef, progress: Callable[[str], None]
) -> Descriptor:
    """Copy the pinned image to `target`'s repository; its descriptor
    (the subject of the artifact)."""
    source = parse_image_ref(pinned)
    if source.digest is None:
        raise FlightPlanError("publish.image_unpinned", f"{pinned} is not pinned by digest")
    top = client.manifest(source, source.digest, MANIFEST_LIMIT)
    media = _media_type(top, pinned)
    progress(f"image {pinned}")
    with tempfile.TemporaryDirectory(prefix="flightdeck-copy-") as scratch:
        if media in _INDEX_TYPES:
            for child in _entries(top.body, "manifests", pinned):
                fetched = client.manifest(source, child.digest, MANIFEST_LIMIT)
                _copy_manifest(client, source, target, fetched, Path(scratch), progress)
                client.push_manifest(
                    target, child.digest, fetched.body, _media_type(fetched, pinned)
                )
        else:
            _copy_manifest(client, source, target, top, Path(scratch), progress)
    client.push_manifest(target, top.digest, top.body, media)
    return Descriptor(media, top.digest, len(top.body))


def copy_layout(
    client: OciClient, layout: Path, digest: str, target: ImageRef, progress: Callable[[str], None]
) -> Descriptor:
    """Push the image manifest `digest` names, with its config and layers,
    from the OCI layout folder `layout` to `target`'s repository."""
    where = f"the composed image {digest}"
    blobs = layout / "blobs" / "sha256"
    body = _layout_blob(blobs, Descriptor("", digest, -1), MANIFEST_LIMIT, where)
    data = _object(body, where)
    media = data.get("mediaType")
    if media in _INDEX_TYPES or not isinstance(media, str) or not media:
        raise FlightPlanError("publish.image_invalid", f"{where} is not one image manifest")
    progress(f"image {digest} (composed, from the image cache)")
    for blob in [_descriptor(data.get("config"), where), *_entries(body, "layers", where)]:

        def read(blob: Descriptor = blob) -> bytes:
            return _layout_blob(blobs, blob, blob.size, where)

        if client.push_blob(target, blob.digest, read):
            progress(f"  pushed {blob.digest[:19]} ({blob.size:,} bytes)")
    client.push_manifest(target, digest, body, media)
    return Descriptor(media, digest, len(body))


def _layout_blob(blobs: Path, blob: Descriptor, limit: int, where: str) -> bytes:
    """The blob's bytes, refused unless a regular file of its size (when
    known) and digest."""
    path = blobs / blob.digest.removeprefix("sha256:")
    try:
        data, _ = read_regular_stat(path, limit, follow_links=False)
        if blob.size >= 0 and len(data) != blob.size:
            raise OSError(errno.EFBIG, f"{len(data):,} bytes, not {blob.size:,}")
    except OSError as exc:
        raise FlightPlanError(
            "publish.image_invalid",
            f"{where}: cannot read {blob.digest} from {blobs}: {exc.strerror or exc}",
            hint="the image cache changed since freeze: prune it and freeze again",
        ) from None
    actual = "sha256:" + hashlib.sha256(data).hexdigest()
    if actual != blob.digest:
        raise FlightPlanError(
            "publish.image_invalid",
            f"{where}: {blobs} holds other bytes ({actual}) than {blob.digest}",
            hint="the image cache changed since freeze: prune it and freeze again",
        )
    return data


def _copy_manifest(
    client: OciClient,
    source: ImageRef,
    target: ImageRef,
    manifest: Fetched,
    scratch: Path,
    progress: Callable[[str], None],
) -> None:
    where = f"{source.registry}/{source.repository}@{manifest.digest}"
    data = _object(manifest.body, where)
    blobs = [_descriptor(data.get("config"), where), *_entries(manifest.body, "layers", where)]
    same_registry = source.registry == target.registry
    for blob in blobs:

        def fetch(blob: Descriptor = blob) -> bytes:
            path = scratch / blob.digest.removeprefix("sha256:")
            client.blob(source, blob.digest, blob.size, path)
            return path.read_bytes()

        mount = source.repository if same_registry else None
        if client.push_blob(target, blob.digest, fetch, mount_from=mount):
            progress(f"  pushed {blob.digest[:19]} ({blob.size:,} bytes)")


def _media_type(fetched: Fetched, where: str) -> str:
    declared = _object(fetched.body, where).get("mediaType")
    media = declared if isinstance(declared, str) and declared else fetched.media_type
    if not media:
        raise FlightPlanError("publish.image_invalid", f"{where}: the manifest names no mediaType")
    return media


def _entries(body: bytes, key: str, where: str) -> list[Descriptor]:
    items = _object(body, where).get(key)
    if not isinstance(items, list) or len(items) > MAX_ENTRIES:
        raise FlightPlanError(
            "publish.image_invalid", f"{where}: `{key}` is not a list of at most {MAX_ENTRIES}"
        )
    return [_descriptor(item, where) for item in items]


def _descriptor(item: Any, where: str) -> Descriptor:
    digest = item.get("digest") if isinstance(item, dict) else None
    size = item.get("size") if isinstance(item, dict) else None
    media = item.get("mediaType", "") if isinstance(item, dict) else ""
    if (
        not isinstance(digest, str)
        or not digest.startswith("sha256:")
        or len(digest) != 71
        or not isinstance(size, int)
        or isinstance(size, bool)
        or size < 0
    ):
        raise FlightPlanError("publish.image_invalid", f"{where}: a descriptor is not sha256")
    return Descriptor(str(media), digest, size)


def _object(body: bytes, where: str) -> dict[str, Any]:
    try:
        data = read_json(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise FlightPlanError("publish.image_invalid", f"{where} is not a JSON manifest")
    return data


__all__ = ["copy_image", "copy_layout"]
