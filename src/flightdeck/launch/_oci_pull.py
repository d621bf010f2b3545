"""Pulling a pinned image through the OCI distribution API, verified.

The lock pins `<registry>/<repository>@sha256:<hex>`; that digest names the
manifest bytes, and the manifest names every other blob by digest and size,
so one pinned digest decides every byte: the manifest (or an index, from which
the linux/amd64 manifest is taken, itself by digest), the config and each
layer are fetched with the resolver freeze used (`OciResolver.fetch`: same
scheme choice, same anonymous token auth) and refused with
`image.blob_mismatch` unless their sha256 and size are exactly the ones named.
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.flightplan import OciResolver, parse_image_ref
from flightdeck.launch._errors import LaunchError

_INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
_MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
# Layer media types the unpacker reads: plain and gzip tarballs.
LAYER_TYPES = {
    "application/vnd.oci.image.layer.v1.tar": "",
    "application/vnd.oci.image.layer.v1.tar+gzip": "gz",
    "application/vnd.docker.image.rootfs.diff.tar.gzip": "gz",
    "application/vnd.docker.image.rootfs.diff.tar": "",
}
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class Blob:
    digest: str
    size: int
    media_type: str

    @property
    def hex(self) -> str:
        return self.digest.removeprefix("sha256:")


def check_blob(data: bytes, blob: Blob, where: str) -> None:
    """Refuse bytes that are not exactly the named blob (size first: cheap)."""
    if len(data) != blob.size:
        raise LaunchError(
            "image.blob_mismatch",
            f"{where}: {blob.digest} should be {blob.size} bytes, got {len(data)}",
            hint="the registry or the cache serves other bytes than the plan pinned",
        )
    actual = "sha256:" + hashlib.sha256(data).hexdigest()
    if actual != blob.digest:
        raise LaunchError(
            "image.blob_mismatch",
            f"{where}: {blob.digest} has digest {actual}",
            hint="the registry or the cache serves other bytes than the plan pinned",
        )


def manifest_blobs(manifest: bytes, where: str) -> tuple[Blob, list[Blob]]:
    """The config and layers an image manifest names."""
    try:
        data = json.loads(manifest)
        config = _blob(data["config"])
        layers = [_blob(item) for item in data["layers"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise LaunchError("image.bad_manifest", f"{where}: not an image manifest ({exc})") from None
    for layer in layers:
        if layer.media_type not in LAYER_TYPES:
            raise LaunchError(
                "image.unsupported",
                f"{where}: layer {layer.digest} is {layer.media_type}",
                hint="flightdeck unpacks plain and gzip tar layers",
            )
    return config, layers


def _blob(item: Any) -> Blob:
    digest, size, media = item["digest"], item["size"], item.get("mediaType", "")
    if not (isinstance(digest, str) and digest.startswith("sha256:") and len(digest) == 71):
        raise ValueError(f"digest {digest!r} is not sha256")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"size {size!r}")
    return Blob(digest, size, str(media))


def pull(pinned: str, into: Path, resolver: OciResolver) -> bytes:
    """Fetch the pinned image's manifest, config and layers into `into`
    (`manifest.json`, `blobs/<hex>`), every one verified; the manifest bytes."""
    ref = parse_image_ref(pinned)
    if ref.digest is None:
        raise LaunchError("image.not_pinned", f"{pinned} is not pinned by digest")
    top = _get(resolver, ref, "manifests", Blob(ref.digest, -1, ""), pinned)
    chosen = platform_manifest(top, pinned)
    manifest = top if chosen is None else _get(resolver, ref, "manifests", chosen, pinned)
    config, layers = manifest_blobs(manifest, pinned)
    (into / "blobs").mkdir(parents=True, exist_ok=True)
    for blob in (config, *layers):
        data = _get(resolver, ref, "blobs", blob, pinned)
        (into / "blobs" / blob.hex).write_bytes(data)
    (into / "pinned.json").write_bytes(top)
    (into / "manifest.json").write_bytes(manifest)
    return manifest


def _get(resolver: OciResolver, ref: Any, kind: str, blob: Blob, where: str) -> bytes:
    import httpx

    accept = ", ".join((*_INDEX_TYPES, *_MANIFEST_TYPES)) if kind == "manifests" else ""
    try:
        response = resolver.fetch(ref, kind, blob.digest, accept)
    except httpx.HTTPError as exc:
        raise LaunchError(
            "image.registry_unreachable",
            f"cannot reach {ref.registry} for {where}: {exc}",
            hint="a cached image runs without a registry; this one is not cached yet",
        ) from None
    if response.status_code != 200:
        raise LaunchError(
            "image.not_found",
            f"{ref.registry} answered {response.status_code} for {kind} {blob.digest} of {where}",
        )
    data = response.content
    if blob.size < 0:  # the pinned manifest: its size is whatever hashes to the pin
        blob = Blob(blob.digest, len(data), blob.media_type)
    check_blob(data, blob, f"{where} ({kind[:-1]})")
    return data


def _media_type(manifest: bytes) -> str:
    try:
        value = json.loads(manifest).get("mediaType", "")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def platform_manifest(top: bytes, where: str) -> Blob | None:
    """For an index, the linux manifest for this machine; None for a manifest."""
    if _media_type(top) not in _INDEX_TYPES:
        return None
    arch = _ARCH.get(platform.machine(), platform.machine())
    try:
        entries = json.loads(top)["manifests"]
        for item in entries:
            plat = item.get("platform", {})
            if plat.get("os") == "linux" and plat.get("architecture") == arch:
                return _blob(item)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LaunchError("image.bad_manifest", f"{where}: not an image index ({exc})") from None
    raise LaunchError("image.unsupported", f"{where} has no linux/{arch} image")


__all__ = ["LAYER_TYPES", "Blob", "check_blob", "manifest_blobs", "platform_manifest", "pull"]
