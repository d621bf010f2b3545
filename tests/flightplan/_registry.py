"""A real OCI registry (Debian's `docker-registry`) on loopback, for tests.

Started on a free port with a temporary config and storage; images are pushed
through the registry HTTP API (blob uploads + manifest PUT), no daemon needed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

BINARY = "docker-registry"
INSTALL_HINT = "install Debian's docker-registry (apt-get install -y docker-registry)"


def available() -> bool:
    return shutil.which(BINARY) is not None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_registry(workdir: Path) -> Iterator[str]:
    """Yield `127.0.0.1:PORT` of a fresh registry; stop it afterwards."""
    port = _free_port()
    config = workdir / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n"
        f"storage:\n  filesystem:\n    rootdirectory: {workdir / 'storage'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    log = (workdir / "registry.log").open("wb")
    process = subprocess.Popen([BINARY, "serve", str(config)], stdout=log, stderr=log)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"http://{address}/v2/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((workdir / "registry.log").read_text())
            time.sleep(0.1)
        yield address
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def _upload(client: httpx.Client, base: str, repository: str, blob: bytes) -> str:
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    started = client.post(f"{base}/v2/{repository}/blobs/uploads/")
    assert started.status_code == 202, started.text
    location = started.headers["Location"]
    url = httpx.URL(location if location.startswith("http") else base + location)
    done = client.put(
        url.copy_merge_params({"digest": digest}),  # keep the upload's own _state
        content=blob,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert done.status_code == 201, done.text
    return digest


def push_image(address: str, repository: str, tag: str) -> str:
    """Push a one-layer OCI image; return the manifest digest."""
    return push_layers(address, repository, tag, [(b"flightdeck test layer\n", False)])


def push_layers(address: str, repository: str, tag: str, layers: list[tuple[bytes, bool]]) -> str:
    """Push the layers (bytes, gzipped?) as an OCI image; the manifest digest."""
    base = f"http://{address}"
    media = "application/vnd.oci.image.layer.v1.tar"
    with httpx.Client(timeout=20) as client:
        # Each layer's diff id is the digest of its uncompressed tar, as in
        # any valid image (a composed image appends its own to these).
        ids = [
            "sha256:" + hashlib.sha256(gzip.decompress(blob) if gz else blob).hexdigest()
            for blob, gz in layers
        ]
        config = json.dumps(
            {"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": ids}}
        ).encode()
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {
                    "mediaType": "application/vnd.oci.image.config.v1+json",
                    "digest": _upload(client, base, repository, config),
                    "size": len(config),
                },
                "layers": [
                    {
                        "mediaType": media + ("+gzip" if gz else ""),
                        "digest": _upload(client, base, repository, blob),
                        "size": len(blob),
                    }
                    for blob, gz in layers
                ],
            }
        ).encode()
        put = client.put(
            f"{base}/v2/{repository}/manifests/{tag}",
            content=manifest,
            headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert put.status_code == 201, put.text
    return "sha256:" + hashlib.sha256(manifest).hexdigest()
