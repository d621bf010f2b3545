"""The image cache: pinned images pulled once, unpacked, re-verified on every use.

Layout under `<data dir>/images/sha256/<manifest hex>/`: `pinned.json` (the
bytes the lock's digest names: a manifest or an index), `manifest.json`,
`blobs/sha256/<hex>` (config and layers as pulled or composed), `rootfs/`
and `ready.json` (the pinned reference, the rootfs tree digest, dropped
members, when), and `oci-layout` with `index.json`: the folder is a standard
OCI image layout too (`_layout`), which `flightdeck publish` pushes a
composed image from. A folder appears only complete (built beside it, then
renamed). Every use
re-hashes the pinned bytes against the lock's digest, every blob against
the manifest's digest and size, and the rootfs against its tree digest;
any difference is `image.cache_corrupt` and nothing runs. The tree digest is
the cache's own record: the blobs are anchored in the signed lock, the
unpacked tree in the data directory, which is trusted as the keyring is.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck._json import read_json
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._fdtree import remove_path, walk
from flightdeck.launch.image._layout import blob_file, write_layout
from flightdeck.launch.image._pull_limits import PullLimits, configured_limits
from flightdeck.launch.image._unpack import tree_digest, unpack

if TYPE_CHECKING:
    from flightdeck.flightplan import OciResolver

# Listing and pruning never import the registry client (httpx): the pull
# and verification helpers are imported where they are first used.
_DIGEST_HEX = frozenset("0123456789abcdef")
_LIST_DEPTH = 256  # `images list` sizes a tree deeper than any unpack makes


@dataclass(frozen=True)
class CachedImage:
    pinned: str
    folder: Path
    tree: str
    dropped: tuple[str, ...] = ()
    pulled: bool = False  # fetched by this call (else found in the cache)

    @property
    def rootfs(self) -> Path:
        return self.folder / "rootfs"


class ImageCache:
    def __init__(self, root: Path | None = None) -> None:
        if root is None:
            from flightdeck.config import data_dir

            root = data_dir() / "images"
        self.root = root

    def folder(self, pinned: str) -> Path:
        _, at, digest = pinned.rpartition("@")
        hexpart = digest.removeprefix("sha256:")
        if not at or len(hexpart) != 64 or not set(hexpart) <= _DIGEST_HEX:
            raise LaunchError("image.not_pinned", f"{pinned} is not pinned by a sha256 digest")
        return self.root / "sha256" / hexpart

    def ensure(
        self,
        pinned: str,
        resolver: Callable[[], OciResolver] | None = None,
        limits: PullLimits | None = None,
    ) -> CachedImage:
        """The verified cached image, pulled and unpacked first if missing,
        within `limits` (when None: `[images]` of the user configuration;
        a launch passes its workspace's)."""
        from flightdeck.flightplan import OciResolver

        folder = self.folder(pinned)
        try:
            return self._ensure(pinned, folder, resolver or OciResolver, limits)
        except OSError as exc:
            raise LaunchError(
                "image.cache_unwritable",
                f"cannot use the image cache {self.root}: {exc.strerror or exc}",
                hint="the data directory (FLIGHTDECK_HOME) must be a writable folder",
            ) from None

    def _ensure(
        self,
        pinned: str,
        folder: Path,
        resolver: Callable[[], OciResolver],
        limits: PullLimits | None,
    ) -> CachedImage:
        from filelock import FileLock

        from flightdeck.flightplan import ResolvedImage
        from flightdeck.launch.image._pull import LAYER_TYPES, manifest_blobs, media_type, pull

        folder.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder) + ".lock"):
            if (folder / "ready.json").is_file():
                return self.verify(pinned)
            if pinned.startswith(ResolvedImage.COMPOSED_REPOSITORY + "@"):
                raise LaunchError(
                    "image.composed_missing",
                    f"the composed image {pinned} is not in this machine's image cache",
                    hint="freeze the plan again here with the same catalog: composition is"
                    " reproducible and gives the same digest",
                )
            limits = limits or configured_limits(None)
            building = Path(tempfile.mkdtemp(prefix=".pull-", dir=folder.parent))
            try:
                client = resolver()
                try:
                    manifest, deadline = pull(pinned, building, client, limits)
                finally:
                    client.close()
                _, layers = manifest_blobs(manifest, pinned)
                blobs = [(blob_file(building, b.hex), LAYER_TYPES[b.media_type]) for b in layers]
                dropped = unpack(blobs, building / "rootfs", limits, deadline)
                top = (building / "pinned.json").read_bytes()
                write_layout(building, manifest, media_type(manifest), top)
                ready = {
                    "pinned": pinned,
                    "tree": tree_digest(building / "rootfs"),
                    "dropped": dropped,
                    "pulled_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
                (building / "ready.json").write_text(json.dumps(ready, indent=2), "utf-8")
                building.rename(folder)
            finally:
                with contextlib.suppress(OSError):
                    remove_path(building)  # however deep a refused layer nested it
        return CachedImage(pinned, folder, str(ready["tree"]), tuple(dropped), pulled=True)

    def put(
        self,
        pinned: str,
        manifest: bytes,
        blobs: Mapping[str, Path],
        limits: PullLimits | None = None,
        *,
        base: CachedImage | None = None,
        spent: dict[str, float] | None = None,
    ) -> CachedImage:
        """Store an image made on this machine (a composed one): the manifest
        the pin's digest names, each blob from the file `blobs` maps its
        digest to (hard-linked where it can be: the caller hands over files
        it digested, the cache's own verified blobs and the layers it wrote;
        a copy is checked), and the rootfs
        unpacked from the layers exactly as a pulled image's is. With `base`
        (the verified cached image whose layers come first), its rootfs is
        copied and only the layers after them are unpacked on top: the same
        tree, since the base's was unpacked from those layers and its tree
        digest just verified. `spent` gets the seconds of `blobs` and
        `rootfs`. An image already stored is verified instead."""
        from filelock import FileLock

        from flightdeck.launch.image._pull import (
            LAYER_TYPES,
            check_blob,
            manifest_blobs,
            media_type,
        )

        folder = self.folder(pinned)
        folder.parent.mkdir(parents=True, exist_ok=True)
        times = spent if spent is not None else {}
        with FileLock(str(folder) + ".lock"):
            if (folder / "ready.json").is_file():
                return self.verify(pinned)
            building = Path(tempfile.mkdtemp(prefix=".compose-", dir=folder.parent))
            try:
                started = time.perf_counter()
                (building / "blobs" / "sha256").mkdir(parents=True)
                for name in ("pinned.json", "manifest.json"):
                    (building / name).write_bytes(manifest)
                config, layers = manifest_blobs(manifest, pinned)
                for blob in (config, *layers):
                    target = blob_file(building, blob.hex)
                    if not _linked(blobs[blob.digest], target):
                        check_blob(target, blob, pinned)
                write_layout(building, manifest, media_type(manifest), manifest)
                times["blobs"] = time.perf_counter() - started
                started = time.perf_counter()
                files = [(blob_file(building, b.hex), LAYER_TYPES[b.media_type]) for b in layers]
                if base is not None:
                    shutil.copytree(base.rootfs, building / "rootfs", symlinks=True)
                    _, below = manifest_blobs((base.folder / "manifest.json").read_bytes(), pinned)
                    files = files[len(below) :]
                dropped = unpack(files, building / "rootfs", limits or configured_limits(None))
                dropped = [*(base.dropped if base else ()), *dropped]
                ready = {
                    "pinned": pinned,
                    "tree": tree_digest(building / "rootfs"),
                    "dropped": dropped,
                    "pulled_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "composed": True,
                }
                (building / "ready.json").write_text(json.dumps(ready, indent=2), "utf-8")
                building.rename(folder)
                times["rootfs"] = time.perf_counter() - started
            finally:
                with contextlib.suppress(OSError):
                    remove_path(building)
        return CachedImage(pinned, folder, str(ready["tree"]), tuple(dropped), pulled=True)

    def verify(self, pinned: str) -> CachedImage:
        from flightdeck.launch.image._pull import (
            Blob,
            check_blob,
            manifest_blobs,
            platform_manifest,
        )

        folder = self.folder(pinned)
        digest = "sha256:" + folder.name
        try:
            ready = read_json((folder / "ready.json").read_text("utf-8"))
            check_blob(folder / "pinned.json", Blob(digest, -1, ""), pinned)
            top = (folder / "pinned.json").read_bytes()
            manifest = (folder / "manifest.json").read_bytes()
            chosen = platform_manifest(top, pinned)
            if chosen is not None:
                check_blob(folder / "manifest.json", chosen, pinned)
            elif manifest != top:
                raise LaunchError("image.blob_mismatch", f"{pinned}: manifest.json differs")
            config, layers = manifest_blobs(manifest, pinned)
            for blob in (config, *layers):
                check_blob(blob_file(folder, blob.hex), blob, pinned)
            tree = tree_digest(folder / "rootfs")
            if tree != ready["tree"]:
                raise LaunchError(
                    "image.blob_mismatch", f"{pinned}: rootfs tree {tree} is not {ready['tree']}"
                )
        except (LaunchError, OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            detail = exc.message if isinstance(exc, LaunchError) else str(exc)
            raise LaunchError(
                "image.cache_corrupt",
                f"the cached image {pinned} no longer matches its digests: {detail}",
                hint="remove it with `flightdeck images prune` and launch again to re-pull",
            ) from None
        return CachedImage(pinned, folder, tree, tuple(ready.get("dropped") or ()))

    def entries(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for ready in sorted((self.root / "sha256").glob("*/ready.json")):
            try:
                data = read_json(ready.read_text("utf-8"))
            except (OSError, ValueError):
                data = {}
            size = 0
            with contextlib.suppress(OSError):  # lstat: the rootfs's links point into the image
                for entry in walk(ready.parent, max_depth=_LIST_DEPTH):
                    if not stat.S_ISDIR(entry.info.st_mode):
                        size += entry.info.st_size
            out.append(
                {
                    "digest": "sha256:" + ready.parent.name,
                    "pinned": data.get("pinned"),
                    "pulled_at": data.get("pulled_at"),
                    "bytes": size,
                }
            )
        return out

    def prune(self, keep: frozenset[str] = frozenset()) -> list[str]:
        """Remove every cached image whose digest is not in `keep`; the
        digests removed (a pull in progress is its own to clean up)."""
        removed: list[str] = []
        base = self.root / "sha256"
        if not base.is_dir():
            return removed
        for folder in sorted(base.iterdir()):
            if folder.name.startswith(".") or not folder.is_dir():
                continue
            digest = "sha256:" + folder.name
            if digest not in keep:
                with contextlib.suppress(OSError):
                    remove_path(folder)
                removed.append(digest)
        return removed


def _linked(source: Path, target: Path) -> bool:
    """A blob is never written once stored, so another image's copy can be
    shared (True); across file systems it is copied (False)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
        return False
    return True


__all__ = ["CachedImage", "ImageCache"]
