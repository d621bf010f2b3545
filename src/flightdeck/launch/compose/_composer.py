"""`FeatureComposer`: the `ImageComposer` freeze receives (issue 32).

For a base pinned by digest and Features in order: the base is pulled (or
found) in the image cache and its layers unpacked again into a work tree;
each Feature is fetched by digest, its `install.sh` run over the tree, and
what changed becomes one layer (`image._layer`); the config and manifest
follow (`image._oci`), and the image is stored in the image cache the way a
pulled one is, its rootfs unpacked from its own layers, so launch boots it
like any pinned image. Nothing depends on the clock, the user or the
machine's file order, so the same base, Features and options give the same
digest anywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flightdeck._json import read_json
from flightdeck.flightplan import (
    ComposedFeature,
    ComposedImage,
    FeaturePin,
    FlightPlanError,
    OciResolver,
    ResolvedImage,
    parse_image_ref,
)
from flightdeck.guard import bwrap_path
from flightdeck.launch.compose._feature import Feature, fetch_feature
from flightdeck.launch.compose._install import MOUNT_POINTS, run_install
from flightdeck.launch.compose._order import install_order
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._cache import CachedImage, ImageCache
from flightdeck.launch.image._fdtree import TooDeep, remove_path
from flightdeck.launch.image._layer import Changes, Snapshot, check, diff, snapshot, write_layer
from flightdeck.launch.image._layout import blob_file
from flightdeck.launch.image._oci import NewLayer, composed_config, composed_manifest, sha256
from flightdeck.launch.image._pull import manifest_blobs
from flightdeck.launch.image._pull_limits import PullLimits, configured_limits
from flightdeck.launch.image._rootfs import Refused


class FeatureComposer:
    """Composes Features onto a base, offline but for the registry pulls.
    `timings` keeps the last composition's phases in seconds (the bench):
    `fetch` (the base and the Features, the work copy of the base's
    rootfs), `install` (the install.sh runs), `diff` (snapshots and what
    changed), `package` (layer files, config, manifest, blobs into the
    image cache), `rootfs` (the stored image's rootfs and its tree digest)."""

    def __init__(
        self,
        *,
        insecure_hosts: frozenset[str] = frozenset(),
        cache: ImageCache | None = None,
        limits: PullLimits | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.insecure_hosts = insecure_hosts
        self.cache = cache or ImageCache()
        self.limits = limits or configured_limits(None)
        self.timeout = timeout
        self.timings: dict[str, float] = {}

    def resolver(self) -> OciResolver:
        return OciResolver(insecure_hosts=self.insecure_hosts)

    def compose(self, base: str, features: Sequence[FeaturePin]) -> ComposedImage:
        bwrap = bwrap_path()
        if bwrap is None:
            raise LaunchError(
                "compose.no_sandbox",
                "composing catalog tools needs a working bubblewrap to run install.sh",
                hint="apt-get install -y bubblewrap",
            )
        self.timings = {"fetch": 0.0, "install": 0.0, "diff": 0.0, "package": 0.0, "rootfs": 0.0}
        work = Path(tempfile.mkdtemp(prefix="fd-compose-"))
        try:
            return asyncio.run(self._compose(bwrap, base, features, work))
        except TooDeep as exc:  # the snapshots walk what install.sh left
            raise LaunchError(
                "compose.unsafe_change",
                f"an install.sh left folders nested deeper than {exc.limit}",
                hint="no image layer may nest deeper than the unpacker allows",
            ) from None
        except OSError as exc:  # never a traceback: the disk, the work tree
            raise LaunchError(
                "compose.io_error", f"composition could not use its files: {exc}"
            ) from None
        finally:
            with contextlib.suppress(OSError):
                remove_path(work)

    async def _compose(
        self, bwrap: str, base: str, pins: Sequence[FeaturePin], work: Path
    ) -> ComposedImage:
        started = time.perf_counter()
        image = await asyncio.to_thread(self._base, base)
        manifest = image.folder / "manifest.json"
        config, layers = manifest_blobs(manifest.read_bytes(), base)
        tree = work / "rootfs"
        blobs = {b.digest: blob_file(image.folder, b.hex) for b in (config, *layers)}
        # The verified base's rootfs, copied (never linked: install.sh may
        # write into any file, and the cache's must stay as they are).
        await asyncio.to_thread(shutil.copytree, image.rootfs, tree, symlinks=True)
        self._spent("fetch", started)
        made: list[NewLayer] = []
        applied: list[ComposedFeature] = []
        container_env: dict[str, str] = {}
        # Every Feature is fetched (and its metadata read) before any
        # install: dependsOn / installsAfter decide the order (`_order`).
        fetched = [
            await self._timed("fetch", self._fetch, pin, work / f"feature-{number}")
            for number, pin in enumerate(pins)
        ]
        for number, feature in enumerate(install_order(fetched)):
            pin = feature.pin
            what = f"{pin.tool}@{pin.version}"
            before = await self._timed("diff", snapshot, tree)
            env = {**container_env, **feature.env}
            started = time.perf_counter()
            await run_install(
                bwrap,
                tree,
                feature.folder,
                env,
                what=what,
                timeout=self.timeout,
                network=pin.network,
            )
            self._spent("install", started)
            changes = await self._timed("diff", self._changes, tree, before, what)
            out = work / f"layer-{number}.tar"
            layer = await self._timed("package", write_layer, tree, changes, out)
            made.append(
                NewLayer(layer[0], layer[1], f"flightdeck compose: {what} {feature.pinned}")
            )
            blobs[layer[0]] = out
            container_env.update(feature.container_env)
            applied.append(ComposedFeature(pin.tool, pin.version, feature.pinned, pin.programs))
        started = time.perf_counter()
        config_bytes = composed_config(
            blobs[config.digest].read_bytes(), len(layers), made, container_env, base
        )
        blobs[sha256(config_bytes)] = work / "config.json"
        (work / "config.json").write_bytes(config_bytes)
        manifest_bytes = composed_manifest(
            read_json(manifest.read_bytes()), config_bytes, made, base
        )
        digest = sha256(manifest_bytes)
        pinned = f"{ResolvedImage.COMPOSED_REPOSITORY}@{digest}"
        self._spent("package", started)
        stored: dict[str, float] = {}
        put = functools.partial(self.cache.put, base=image, spent=stored)
        await asyncio.to_thread(put, pinned, manifest_bytes, blobs, self.limits)
        self.timings["package"] += stored.get("blobs", 0.0)
        self.timings["rootfs"] = stored.get("rootfs", 0.0)
        return ComposedImage(digest, tuple(applied))

    def _base(self, base: str) -> CachedImage:
        try:
            ref = parse_image_ref(base)
        except FlightPlanError as exc:
            raise LaunchError("compose.bad_base", exc.message) from None
        if ref.digest is None:
            raise LaunchError("compose.bad_base", f"the base {base} is not pinned by digest")
        if ref.tag is not None:
            resolver = self.resolver()
            try:
                now = resolver.resolve(f"{ref.registry}/{ref.repository}:{ref.tag}")
            finally:
                resolver.close()
            if now is None or not now.endswith("@" + ref.digest):
                raise LaunchError(
                    "compose.base_tag_moved",
                    f"the base is pinned as {base}, but the tag now names"
                    f" {now.rpartition('@')[2] if now else 'nothing'}",
                    hint="review the new base and pin its digest, or pin the digest alone",
                )
        return self.cache.ensure(ref.pinned, self.resolver, self.limits)

    def _fetch(self, pin: FeaturePin, into: Path) -> Feature:
        into.mkdir()
        resolver = self.resolver()
        try:
            return fetch_feature(pin, resolver, into, self.limits)
        finally:
            resolver.close()

    def _changes(self, tree: Path, before: Snapshot, what: str) -> Changes:
        after = snapshot(tree)
        changes = diff(before, after, MOUNT_POINTS)
        try:
            check(after, changes)
        except Refused as exc:
            raise LaunchError(
                "compose.unsafe_change",
                f"install.sh of {what} left what no image layer may carry: {exc.reason}",
                hint="a Feature installs files, folders and links inside the image",
            ) from None
        return changes

    async def _timed(self, phase: str, call: Callable[..., Any], *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return await asyncio.to_thread(call, *args)
        finally:
            self._spent(phase, started)

    def _spent(self, phase: str, started: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - started


__all__ = ["FeatureComposer"]
