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
# What registries accept as a manifest (the distribution spec's 4 MiB); the
# pinned manifest's own size is not known before it is fetched.
MANIFEST_LIMIT = 4 << 20
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class Blob:
    digest: str
    size: int
    media_type: str

    @property
    def hex(self) -> str:
        return self.digest.removeprefix("sha256:")


def check_blob(path: Path, blob: Blob, where: str) -> None:
    """Refuse a file that is not exactly the named blob (size first: cheap);
    `blob.size` -1 checks the digest only (the pinned manifest)."""
    size = path.stat().st_size
    if blob.size >= 0 and size != blob.size:
        raise LaunchError(
            "image.blob_mismatch",
            f"{where}: {blob.digest} should be {blob.size} bytes, got {size}",
            hint="the registry or the cache serves other bytes than the plan pinned",
        )
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    actual = "sha256:" + digest.hexdigest()
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
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # a hostile registry
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
    (`pinned.json`, `manifest.json`, `blobs/<hex>`), streamed to disk and
    every one verified; the manifest bytes."""
    ref = parse_image_ref(pinned)
    if ref.digest is None:
        raise LaunchError("image.not_pinned", f"{pinned} is not pinned by digest")
    (into / "blobs").mkdir(parents=True, exist_ok=True)
    top_path, manifest_path = into / "pinned.json", into / "manifest.json"
    _get(resolver, ref, "manifests", Blob(ref.digest, -1, ""), pinned, top_path)
    top = top_path.read_bytes()
    chosen = platform_manifest(top, pinned)
    if chosen is None:
        manifest_path.write_bytes(top)
    else:
        _get(resolver, ref, "manifests", chosen, pinned, manifest_path)
    manifest = manifest_path.read_bytes()
    config, layers = manifest_blobs(manifest, pinned)
    for blob in (config, *layers):
        _get(resolver, ref, "blobs", blob, pinned, into / "blobs" / blob.hex)
    return manifest


def _get(resolver: OciResolver, ref: Any, kind: str, blob: Blob, where: str, dest: Path) -> None:
    import httpx

    accept = ", ".join((*_INDEX_TYPES, *_MANIFEST_TYPES)) if kind == "manifests" else ""
    limit = blob.size if blob.size >= 0 else MANIFEST_LIMIT
    try:
        status = resolver.fetch_to(ref, kind, blob.digest, dest, limit=limit, accept=accept)
    except httpx.HTTPError as exc:
        raise LaunchError(
            "image.registry_unreachable",
            f"cannot reach {ref.registry} for {where}: {exc}",
            hint="a cached image runs without a registry; this one is not cached yet",
        ) from None
    if status != 200:
        raise LaunchError(
            "image.not_found",
            f"{ref.registry} answered {status} for {kind} {blob.digest} of {where}",
        )
    if blob.size < 0 and dest.stat().st_size > MANIFEST_LIMIT:
        raise LaunchError("image.bad_manifest", f"{where}: the manifest is over 4 MiB")
    check_blob(dest, blob, f"{where} ({kind[:-1]})")


def _media_type(manifest: bytes) -> str:
    try:
        value = json.loads(manifest).get("mediaType", "")
    except (ValueError, AttributeError, RecursionError):
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
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise LaunchError("image.bad_manifest", f"{where}: not an image index ({exc})") from None
    raise LaunchError("image.unsupported", f"{where} has no linux/{arch} image")


__all__ = ["LAYER_TYPES", "Blob", "check_blob", "manifest_blobs", "platform_manifest", "pull"]
