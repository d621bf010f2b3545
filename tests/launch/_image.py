"""A tiny image built by the test itself: Debian's static busybox plus a
marker file, pushed layer by layer to the loopback registry."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import httpx

from flightdeck.flightplan import OciResolver
from tests.flightplan._registry import push_layers

# Pushing is the registry helper's: layer by layer, the manifest digest back.
push = push_layers

BUSYBOX = Path("/bin/busybox")
INSTALL_HINT = "install Debian's busybox-static (apt-get install -y busybox-static)"
MARKER = "only the image has this\n"


def busybox_available() -> bool:
    if not BUSYBOX.is_file():
        return False
    head = BUSYBOX.read_bytes()[:4096]
    return head.startswith(b"\x7fELF") and b"/lib64/ld-linux" not in head  # static only


def layer(entries: list[tuple[str, str, bytes | str]], *, gz: bool = False) -> bytes:
    """A tar layer of (name, kind, data): kind file|exec|link|dir|char."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, str(data)
                tar.addfile(info)
            elif kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif kind == "char":
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
                tar.addfile(info)
            else:
                body = data if isinstance(data, bytes) else data.encode()
                info.size = len(body)
                info.mode = {"exec": 0o755, "suid": 0o4755}.get(kind, 0o644)
                tar.addfile(info, io.BytesIO(body))
    raw = buffer.getvalue()
    return gzip.compress(raw, mtime=0) if gz else raw


def busybox_layers() -> list[tuple[bytes, bool]]:
    """Layer 1: busybox, its applet links, a marker and a file layer 2 deletes
    (a whiteout) ; layer 2 (gzip): a second file, a device node (dropped)."""
    applets = ["sh", "cat", "ls", "test", "echo", "stat", "wc", "wget"]
    first = layer(
        [
            ("bin", "dir", b""),
            ("bin/busybox", "exec", BUSYBOX.read_bytes()),
            *[(f"bin/{a}", "link", "busybox") for a in applets],
            ("etc", "dir", b""),
            ("etc/flightdeck-marker", "file", MARKER),
            ("etc/removed-by-layer-2", "file", "gone\n"),
        ]
    )
    second = layer(
        [
            ("etc/.wh.removed-by-layer-2", "file", b""),
            ("etc/second", "file", "layer two\n"),
            ("dev-null-copy", "char", b""),
        ],
        gz=True,
    )
    return [(first, False), (second, True)]


REGISTRY = "registry.test"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def serve(
    layers: list[tuple[bytes, bool]], *, lie: dict[str, bytes] | None = None
) -> tuple[str, OciResolver]:
    """A registry double (httpx's MockTransport) serving an image of these
    layers; the pinned reference and a resolver that talks to it. `lie`
    replaces a blob's bytes."""
    config = b'{"os": "linux"}'
    blobs = {digest(config): config}
    entries = []
    for blob, gz in layers:
        blobs[digest(blob)] = blob
        media = "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if gz else "")
        entries.append({"mediaType": media, "digest": digest(blob), "size": len(blob)})
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"digest": digest(config), "size": len(config)},
            "layers": entries,
        }
    ).encode()
    blobs[digest(manifest)] = manifest
    for name, replacement in (lie or {}).items():
        blobs[name] = replacement

    def handler(request: httpx.Request) -> httpx.Response:
        name = request.url.path.rsplit("/", 1)[-1]
        if name not in blobs:
            return httpx.Response(404)
        return httpx.Response(200, content=blobs[name])

    resolver = OciResolver(transport=httpx.MockTransport(handler))
    return f"{REGISTRY}/acme/tool@{digest(manifest)}", resolver
