"""Benchmark: composing a base with two Features, paired against umoci.

Run: .venv/bin/python bench/compose.py [PAIRS]
Needs Debian's docker-registry, busybox-static, bubblewrap and umoci.

The base is static busybox plus 3,000 files of 8 KiB (one layer, ~24 MiB);
each Feature bundles a 4 MiB file and makes 400 small ones with its
install.sh. flightdeck composes them (`FeatureComposer`, a fresh image cache
each round) and reports its phases apart: fetching the base and the
Features, the install.sh runs, the layers (snapshots, diffs, tar files) and
the store (config, manifest, the cache with its unpacked, hashed rootfs).
umoci gets the same prepared layers (the ones flightdeck made) and inserts
them into the same base as an OCI layout (`umoci raw add-layer`, which also
compresses them), pair by pair with flightdeck's packaging (layers + store);
`umoci unpack` of the result is timed too, since flightdeck's store unpacks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench._paired import paired  # noqa: E402
from tests.flightplan import _registry  # noqa: E402
from tests.launch import _features, _image  # noqa: E402

from flightdeck.flightplan import FeaturePin  # noqa: E402
from flightdeck.launch import FeatureComposer  # noqa: E402
from flightdeck.launch.image._cache import ImageCache  # noqa: E402

INSTALL = """#!/bin/sh
set -e
mkdir -p /opt/{name}
cp big.bin /opt/{name}/big.bin
i=0
while [ $i -lt 400 ]; do echo "{name} $i" > /opt/{name}/f$i; i=$((i+1)); done
"""


def base_layers() -> list[tuple[bytes, bool]]:
    files = [(f"usr/share/data/d{i // 100}/f{i}", "file", os.urandom(8192)) for i in range(3000)]
    dirs = [(f"usr/share/data/d{i}", "dir", b"") for i in range(30)]
    extra = _image.layer([("usr/share", "dir", b""), ("usr/share/data", "dir", b""), *dirs, *files])
    return [*_features.runner_layers(), (extra, False)]


def push_base(address: str, layers: list[tuple[bytes, bool]]) -> str:
    """The base with a config whose diff ids are right (umoci checks them)."""
    import httpx

    url = f"http://{address}"
    with httpx.Client(timeout=60) as client:
        ids = ["sha256:" + hashlib.sha256(blob).hexdigest() for blob, _ in layers]
        config = json.dumps(
            {"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": ids}}
        ).encode()
        descriptors = [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": _registry._upload(client, url, "bench/base", blob),
                "size": len(blob),
            }
            for blob, _ in layers
        ]
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {
                    "mediaType": "application/vnd.oci.image.config.v1+json",
                    "digest": _registry._upload(client, url, "bench/base", config),
                    "size": len(config),
                },
                "layers": descriptors,
            }
        ).encode()
        put = client.put(
            f"{url}/v2/bench/base/manifests/1",
            content=manifest,
            headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
        )
        put.raise_for_status()
    return "sha256:" + hashlib.sha256(manifest).hexdigest()


def feature(name: str) -> bytes:
    big = hashlib.sha256(name.encode()).hexdigest() * (4 * 1024 * 1024 // 64)
    return _features.feature_tar(name, "1.0.0", INSTALL.format(name=name), {"big.bin": big})


def oci_layout(folder: Path, image_dir: Path) -> None:
    """The cached base as an OCI layout umoci can open, tagged `base`."""
    blobs = folder / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    for blob in (image_dir / "blobs" / "sha256").iterdir():
        shutil.copyfile(blob, blobs / blob.name)
    manifest = (image_dir / "manifest.json").read_bytes()
    digest = hashlib.sha256(manifest).hexdigest()
    (blobs / digest).write_bytes(manifest)
    (folder / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": f"sha256:{digest}",
                "size": len(manifest),
                "annotations": {"org.opencontainers.image.ref.name": "base"},
            }
        ],
    }
    (folder / "index.json").write_text(json.dumps(index))


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for tool in ("umoci", "docker-registry", "bwrap"):
        if shutil.which(tool) is None:
            sys.exit(f"bench/compose.py needs {tool} (apt-get install -y {tool})")
    work = Path(tempfile.mkdtemp(prefix="fd-bench-compose-"))
    os.environ["FLIGHTDECK_HOME"] = str(work / "home")
    (work / "registry").mkdir()
    with _registry.running_registry(work / "registry") as address:
        base_digest = push_base(address, base_layers())
        base = f"{address}/bench/base@{base_digest}"
        pins = []
        for name in ("alpha", "beta"):
            digest = _features.push_feature(address, f"bench/{name}", "1", feature(name))
            ref = f"{address}/bench/{name}@{digest}"
            pins.append(FeaturePin(name, "1", "1.0.0", ref, {}, (name,)))
        phases: dict[str, list[float]] = {}
        state: dict[str, Path] = {}
        round_no = [0]

        def flightdeck() -> float:
            round_no[0] += 1
            cache = ImageCache(work / f"cache-{round_no[0]}")
            composer = FeatureComposer(cache=cache)
            image = composer.compose(base, pins)
            for phase, seconds in composer.timings.items():
                phases.setdefault(phase, []).append(seconds)
            folder = cache.folder(f"flightdeck.local/composed@{image.digest}")
            state["image"] = folder
            state["base"] = cache.folder(base)
            return composer.timings["package"]

        flightdeck()  # warm up, and the layers umoci inserts
        phases.clear()
        manifest = json.loads((state["image"] / "manifest.json").read_text())
        layers = [
            state["image"] / "blobs" / "sha256" / x["digest"][7:] for x in manifest["layers"][-2:]
        ]
        unpack_times: list[float] = []

        def umoci() -> float:
            layout = Path(tempfile.mkdtemp(prefix="umoci-", dir=work))
            oci_layout(layout, state["base"])
            started = time.perf_counter()
            subprocess.run(
                [
                    "umoci",
                    "raw",
                    "add-layer",
                    "--image",
                    f"{layout}:base",
                    "--tag",
                    "one",
                    str(layers[0]),
                ],
                check=True,
            )
            subprocess.run(
                [
                    "umoci",
                    "raw",
                    "add-layer",
                    "--image",
                    f"{layout}:one",
                    "--tag",
                    "two",
                    str(layers[1]),
                ],
                check=True,
            )
            spent = time.perf_counter() - started
            started = time.perf_counter()
            unpacked = subprocess.run(
                ["umoci", "unpack", "--rootless", "--image", f"{layout}:two", str(layout / "b")],
                check=False,
                capture_output=True,
                text=True,
            )
            if unpacked.returncode != 0:
                sys.exit(f"umoci unpack failed: {unpacked.stderr[-2000:]}")
            unpack_times.append(time.perf_counter() - started)
            shutil.rmtree(layout)
            return spent

        result = paired(flightdeck, umoci, pairs)
    shutil.rmtree(work, ignore_errors=True)
    median = {phase: statistics.median(values) for phase, values in phases.items()}
    print(f"compose: base ~24 MiB + 2 Features (4 MiB + 400 files each), {pairs} pairs")
    for phase in ("fetch", "install", "diff", "package", "rootfs"):
        print(f"  flightdeck {phase:8} {median[phase] * 1000:8.0f} ms")
    print(f"  umoci raw add-layer x2   {result.b_median * 1000:8.0f} ms (vs flightdeck package)")
    unpacked = statistics.median(unpack_times)
    print(f"  umoci unpack --rootless  {unpacked * 1000:8.0f} ms (vs flightdeck rootfs)")
    package = statistics.median(a / b for a, b in zip(result.a, result.b, strict=True))
    rootfs = statistics.median(r / u for r, u in zip(phases["rootfs"], unpack_times, strict=True))
    print(
        f"  package / umoci add-layer: {package:.2f}x (pairs: umoci/flightdeck {result.spread()})"
    )
    print(f"  rootfs / umoci unpack:     {rootfs:.2f}x")


if __name__ == "__main__":
    main()
