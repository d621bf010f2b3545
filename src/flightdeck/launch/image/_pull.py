"""Pulling a pinned image through the OCI distribution API, verified.

The lock pins `<registry>/<repository>@sha256:<hex>`; that digest names the
manifest bytes, and the manifest names every other blob by digest and size,
so one pinned digest decides every byte: the manifest (or an index, from which
the linux/amd64 manifest is taken, itself by digest), the config and each
layer are fetched with the resolver freeze used (`OciResolver.fetch_to`: same
scheme choice, same anonymous token auth) and refused with
`image.blob_mismatch` unless their sha256 and size are exactly the ones named.

A pull is bounded before it costs (`PullLimits`): manifests and indexes at
every level at 4 MiB (a size an index declares is judged before the fetch),
the layer count and the bytes the manifest declares before any blob is
fetched, and one deadline for the whole pull, passed to every request.
"""

from __future__ import annotations

import hashlib
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck._json import read_json
from flightdeck.flightplan import OciResolver, parse_image_ref
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._pull_limits import MANIFEST_LIMIT, PullLimits

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
    # A Dev Container Feature's tarball (issue 32), fetched like a layer.
    "application/vnd.devcontainers.layer.v1+tar": "",
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
        data = read_json(manifest)
        config = _blob(data["config"])
        layers = [_blob(item) for item in data["layers"]]
    except (ValueError, KeyError, TypeError) as exc:  # a hostile registry
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


def pull(
    pinned: str, into: Path, resolver: OciResolver, limits: PullLimits | None = None
) -> tuple[bytes, float]:
    """Fetch the pinned image's manifest, config and layers into `into`
    (`pinned.json`, `manifest.json`, `blobs/sha256/<hex>`), streamed to disk and
    every one verified; the manifest bytes and the pull's deadline (the
    unpacking that follows keeps to it too)."""
    limits = limits or PullLimits()
    deadline = time.monotonic() + limits.pull_timeout
    ref = parse_image_ref(pinned)
    if ref.digest is None:
        raise LaunchError("image.not_pinned", f"{pinned} is not pinned by digest")
    blobs = into / "blobs" / "sha256"  # an OCI layout's place (`_layout`)
    blobs.mkdir(parents=True, exist_ok=True)
    top_path, manifest_path = into / "pinned.json", into / "manifest.json"
    get = _Getter(resolver, ref, pinned, deadline, limits)
    get("manifests", Blob(ref.digest, -1, ""), top_path)
    top = top_path.read_bytes()
    chosen = platform_manifest(top, pinned)
    if chosen is None:
        manifest_path.write_bytes(top)
    else:
        _bounded(chosen, "the manifest the index names", pinned)
        get("manifests", chosen, manifest_path)
    manifest = manifest_path.read_bytes()
    config, layers = manifest_blobs(manifest, pinned)
    if len(layers) > limits.max_layers:
        raise LaunchError(
            "image.too_many_layers",
            f"{pinned} has {len(layers):,} layers, over the {limits.max_layers:,} allowed",
            hint="raise [images] max_layers in flightdeck.toml if the image is trusted",
        )
    _bounded(config, "its config", pinned)
    declared = config.size + sum(layer.size for layer in layers)
    if declared > limits.max_download_bytes:
        raise LaunchError(
            "image.too_large",
            f"{pinned} declares {declared:,} bytes of blobs, over the"
            f" {limits.max_download_bytes:,} a pull may fetch",
            hint="raise [images] max_download_mib in flightdeck.toml if the image is trusted",
        )
    for blob in (config, *layers):
        get("blobs", blob, blobs / blob.hex)
    return manifest, deadline


def _bounded(blob: Blob, what: str, where: str) -> None:
    if blob.size > MANIFEST_LIMIT:
        raise LaunchError(
            "image.too_large",
            f"{where}: {what} declares {blob.size:,} bytes, over the {MANIFEST_LIMIT:,}"
            " a manifest or config may have",
        )


@dataclass(frozen=True)
class _Getter:
    resolver: OciResolver
    ref: Any
    where: str
    deadline: float
    limits: PullLimits

    def __call__(self, kind: str, blob: Blob, dest: Path) -> None:
        import httpx

        from flightdeck.flightplan import RegistryRefused

        ref, where = self.ref, self.where
        accept = ", ".join((*_INDEX_TYPES, *_MANIFEST_TYPES)) if kind == "manifests" else ""
        limit = blob.size if blob.size >= 0 else MANIFEST_LIMIT
        try:
            status = self.resolver.fetch_to(
                ref, kind, blob.digest, dest, limit=limit, accept=accept, deadline=self.deadline
            )
        except httpx.HTTPError as exc:
            raise LaunchError(
                "image.registry_unreachable",
                f"cannot reach {ref.registry} for {where}: {exc}",
                hint="a cached image runs without a registry; this one is not cached yet",
            ) from None
        except RegistryRefused as exc:
            if exc.code == "too_large" and blob.size >= 0:
                raise LaunchError(
                    "image.blob_mismatch",
                    f"{where}: {ref.registry} serves more than the {blob.size:,} bytes"
                    f" {blob.digest} has",
                    hint="the registry or the cache serves other bytes than the plan pinned",
                ) from None
            if exc.code == "too_large":
                raise LaunchError(
                    "image.too_large", f"{where}: the manifest is over {MANIFEST_LIMIT:,} bytes"
                ) from None
            raise LaunchError(
                f"image.{exc.code}",
                f"{ref.registry} for {where}: {exc.message}",
                hint=_HINTS[exc.code],
            ) from None
        if status != 200:
            raise LaunchError(
                "image.not_found",
                f"{ref.registry} answered {status} for {kind} {blob.digest} of {where}",
            )
        check_blob(dest, blob, f"{where} ({kind[:-1]})")


_HINTS = {
    "redirect_refused": "a registry may redirect only where its policy allows: a loopback"
    " registry to loopback, others not to loopback, plain http only to loopback or an"
    " --insecure-registry",
    "bad_token": "the registry's token service answered something that is not a token",
    "pull_timeout": "raise [images] pull_timeout in flightdeck.toml, or try again when the"
    " registry answers faster",
}


def media_type(manifest: bytes) -> str:
    try:
        value = read_json(manifest).get("mediaType", "")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def platform_manifest(top: bytes, where: str) -> Blob | None:
    """For an index, the linux manifest for this machine; None for a manifest."""
    if media_type(top) not in _INDEX_TYPES:
        return None
    arch = _ARCH.get(platform.machine(), platform.machine())
    try:
        entries = read_json(top)["manifests"]
        for item in entries:
            plat = item.get("platform", {})
            if plat.get("os") == "linux" and plat.get("architecture") == arch:
                return _blob(item)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LaunchError("image.bad_manifest", f"{where}: not an image index ({exc})") from None
    raise LaunchError("image.unsupported", f"{where} has no linux/{arch} image")


__all__ = [
    "LAYER_TYPES",
    "MANIFEST_LIMIT",
    "Blob",
    "check_blob",
    "manifest_blobs",
    "media_type",
    "platform_manifest",
    "pull",
]
