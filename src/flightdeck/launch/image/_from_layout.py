"""A pinned image stored from bytes someone else handed over (issue 32):
the composed image inside an exported layout tar, for `skills import` on a
machine without the registry the plan was published to.

The bytes are hostile until checked, as a registry's are: the manifest is
read at most 4 MiB and must be the pinned digest; the layer count and the
sizes it declares are judged against the `[images]` limits before a blob
is read; each blob is read at most its declared size and must be its
digest (`image.blob_mismatch` otherwise); the layers are then unpacked by
the image unpacker within the same limits (`ImageCache.put`), and the
folder appears only complete.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._cache import CachedImage, ImageCache
from flightdeck.launch.image._pull import Blob, check_blob, manifest_blobs
from flightdeck.launch.image._pull_limits import MANIFEST_LIMIT, PullLimits, configured_limits

# (digest, at most this many bytes, write them here); raises on any refusal.
Fetch = Callable[[str, int, Path], None]


def store_image(
    pinned: str, fetch: Fetch, cache: ImageCache | None = None, limits: PullLimits | None = None
) -> CachedImage:
    cache = cache or ImageCache()
    limits = limits or configured_limits(None)
    digest = pinned.rpartition("@")[2]
    cache.root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".layout-", dir=cache.root) as scratch:
        top = Path(scratch) / "manifest"
        fetch(digest, MANIFEST_LIMIT, top)
        check_blob(top, Blob(digest, -1, ""), pinned)
        manifest = top.read_bytes()
        config, layers = manifest_blobs(manifest, pinned)
        declared = config.size + sum(layer.size for layer in layers)
        if len(layers) > limits.max_layers or declared > limits.max_download_bytes:
            raise LaunchError(
                "image.too_large",
                f"{pinned} has {len(layers):,} layers and declares {declared:,} bytes, over"
                " the [images] limits",
                hint="raise [images] max_layers / max_download_mib if the image is trusted",
            )
        if config.size > MANIFEST_LIMIT:
            raise LaunchError("image.too_large", f"{pinned}: its config is over 4 MiB")
        files: dict[str, Path] = {}
        for blob in (config, *layers):
            path = Path(scratch) / blob.hex
            if not path.exists():
                fetch(blob.digest, blob.size, path)
                check_blob(path, blob, pinned)
            files[blob.digest] = path
        return cache.put(pinned, manifest, files, limits)


__all__ = ["Fetch", "store_image"]
