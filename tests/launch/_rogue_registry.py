"""A small OCI registry on loopback that misbehaves on request.

It serves `GET /v2/<repo>/manifests/<digest>` and `/blobs/<digest>` from a
dict, counts every request by path, and for chosen paths instead drips the
body a byte at a time, redirects, or asks for a bearer token from its own
`/token` endpoint, whose answer the test chooses. Everything listens on
127.0.0.1 only and stops with the context manager.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def manifest(layers: list[tuple[bytes, bool]], config: bytes = b'{"os": "linux"}') -> bytes:
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": {"digest": digest(config), "size": len(config)},
            "layers": [
                {"mediaType": LAYER + ("+gzip" if gz else ""), "digest": digest(b), "size": len(b)}
                for b, gz in layers
            ],
        }
    ).encode()


@dataclass
class Rogue:
    """What the registry serves and how it misbehaves; set before requests."""

    blobs: dict[str, bytes] = field(default_factory=dict)  # digest -> bytes
    drip: dict[str, float] = field(default_factory=dict)  # digest -> seconds per byte
    drip_for: float = 15.0  # then the rest at once: a test never waits for ever
    redirect: dict[str, str] = field(default_factory=dict)  # digest -> Location
    token_answer: bytes | None = None  # when set, every /v2 request needs the token
    token_type: str = "application/json"
    require_accept: bool = False  # a manifest request must accept the OCI manifest type
    hits: Counter[str] = field(default_factory=Counter)
    address: str = ""
    stop: threading.Event = field(default_factory=threading.Event)

    def add(self, data: bytes) -> str:
        self.blobs[digest(data)] = data
        return digest(data)

    def image(self, layers: list[tuple[bytes, bool]]) -> tuple[str, bytes]:
        """Serve an image of these layers; its pinned reference and manifest."""
        config = b'{"os": "linux"}'
        self.add(config)
        for blob, _ in layers:
            self.add(blob)
        body = manifest(layers, config)
        return f"{self.address}/acme/tool@{self.add(body)}", body


def _media_type(data: bytes) -> str:
    try:
        value = json.loads(data).get("mediaType", MANIFEST)
    except (ValueError, AttributeError):
        return "application/json"  # the registry serves garbage as the test asks
    return str(value)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Any

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        rogue: Rogue = self.server.rogue
        path = self.path.split("?", 1)[0]
        rogue.hits[path] += 1
        if path == "/token":
            body = rogue.token_answer or b"{}"
            self._answer(200, body, rogue.token_type)
            return
        if rogue.token_answer is not None and self.headers.get("Authorization") is None:
            realm = f'Bearer realm="http://{rogue.address}/token",service="rogue"'
            self._answer(401, b"{}", "application/json", {"WWW-Authenticate": realm})
            return
        name = path.rsplit("/", 1)[-1]
        accepted = MANIFEST in self.headers.get("Accept", "")
        if rogue.require_accept and "/manifests/" in path and not accepted:
            self._answer(404, b"{}", "application/json")
            return
        if name in rogue.redirect:
            self._answer(307, b"", "text/plain", {"Location": rogue.redirect[name]})
            return
        if name not in rogue.blobs:
            self._answer(404, b"{}", "application/json")
            return
        data = rogue.blobs[name]
        kind = _media_type(data) if "/manifests/" in path else ""
        if name not in rogue.drip:
            self._answer(200, data, kind or "application/octet-stream")
            return
        self.send_response(200)
        self.send_header("Content-Type", kind or "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        until = time.monotonic() + rogue.drip_for
        sent = 0
        try:
            while sent < len(data) and time.monotonic() < until and not rogue.stop.is_set():
                self.wfile.write(data[sent : sent + 1])
                self.wfile.flush()
                sent += 1
                rogue.stop.wait(rogue.drip[name])
            self.wfile.write(data[sent:])
        except OSError:
            pass  # the client gave up: that is the point

    def do_HEAD(self) -> None:
        self.do_GET()

    def _answer(
        self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            with suppress(OSError):
                self.wfile.write(body)


@contextmanager
def rogue_registry() -> Iterator[Rogue]:
    rogue = Rogue()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.rogue = rogue  # type: ignore[attr-defined]
    rogue.address = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield rogue
    finally:
        rogue.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
