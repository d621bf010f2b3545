"""A small OCI registry on loopback, written for the tests: blobs, monolithic
uploads, manifests by tag and digest, and the referrers API (which Debian's
docker-registry lacks). `override` makes it hostile: a path answered with
whatever status, headers and body a test wants.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_PATH = re.compile(r"^/v2/(?P<repo>.+?)/(?P<kind>blobs|manifests|referrers)/(?P<ref>[^/?]+)$")


@dataclass
class Answer:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Registry:
    address: str = ""
    blobs: dict[str, bytes] = field(default_factory=dict)
    manifests: dict[tuple[str, str], tuple[bytes, str]] = field(default_factory=dict)
    overrides: dict[str, Answer] = field(default_factory=dict)
    referrers_api: bool = True
    requests: list[str] = field(default_factory=list)
    # A request line starting with this waits until `release` is set (a
    # push or a fetch caught in the middle).
    stall: str | None = None
    # Credentials every /v2/ request must carry: "user:secret" as Basic, or,
    # with `bearer`, a token from /token asked for with them.
    basic: str | None = None
    bearer: bool = False
    release: threading.Event = field(default_factory=threading.Event)

    def override(self, path: str, answer: Answer) -> None:
        self.overrides[path] = answer

    def manifest(self, repo: str, ref: str) -> bytes:
        return self.manifests[(repo, ref)][0]


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _handler(state: Registry) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, answer: Answer, head: bool = False) -> None:
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            if not head:
                self.wfile.write(answer.body)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _route(self, method: str) -> None:
            state.requests.append(f"{method} {self.path}")
            if state.stall and f"{method} {self.path}".startswith(state.stall):
                state.release.wait(60)
            path = self.path.split("?", 1)[0]
            if not self._authorized(path):
                return
            if path in state.overrides:
                self._body()
                self._send(state.overrides[path], head=method == "HEAD")
                return
            if path == "/v2/":
                self._send(Answer(200, b"{}"))
                return
            if path.endswith("/blobs/uploads/") and method == "POST":
                self._body()
                location = f"{path}{uuid.uuid4().hex}"
                self._send(Answer(202, headers={"Location": location}))
                return
            if "/blobs/uploads/" in path and method == "PUT":
                data = self._body()
                wanted = self.path.split("digest=", 1)[1].split("&")[0].replace("%3A", ":")
                if _digest(data) != wanted:
                    self._send(Answer(400, b"digest"))
                    return
                state.blobs[wanted] = data
                self._send(Answer(201, headers={"Docker-Content-Digest": wanted}))
                return
            match = _PATH.match(path)
            if match is None:
                self._send(Answer(404))
                return
            repo, kind, ref = match["repo"], match["kind"], match["ref"]
            if kind == "blobs":
                data = state.blobs.get(ref)
                self._send(Answer(200, data) if data is not None else Answer(404), method == "HEAD")
            elif kind == "manifests" and method == "PUT":
                self._put_manifest(repo, ref)
            elif kind == "manifests":
                found = state.manifests.get((repo, ref))
                if found is None:
                    self._send(Answer(404), method == "HEAD")
                    return
                body, media = found
                headers = {"Content-Type": media, "Docker-Content-Digest": _digest(body)}
                self._send(Answer(200, body, headers), method == "HEAD")
            elif state.referrers_api:
                self._send(Answer(200, self._referrers(repo, ref), {"Content-Type": _INDEX}))
            else:
                self._send(Answer(404))

        def _authorized(self, path: str) -> bool:
            if state.basic is None:
                return True
            import base64

            basic = "Basic " + base64.b64encode(state.basic.encode()).decode()
            sent = self.headers.get("Authorization", "")
            if path == "/token":
                ok = sent == basic
                self._body()
                self._send(Answer(200, b'{"token": "t0k"}') if ok else Answer(401))
                return False
            if sent == ("Bearer t0k" if state.bearer else basic):
                return True
            self._body()
            challenge = (
                f'Bearer realm="http://{state.address}/token",service="test"'
                if state.bearer
                else 'Basic realm="test"'
            )
            self._send(Answer(401, headers={"WWW-Authenticate": challenge}))
            return False

        def _put_manifest(self, repo: str, ref: str) -> None:
            body = self._body()
            media = self.headers.get("Content-Type", "")
            digest = _digest(body)
            state.manifests[(repo, ref)] = (body, media)
            state.manifests[(repo, digest)] = (body, media)
            headers = {"Docker-Content-Digest": digest}
            if state.referrers_api and "subject" in json.loads(body):
                headers["OCI-Subject"] = json.loads(body)["subject"]["digest"]
            self._send(Answer(201, headers=headers))

        def _referrers(self, repo: str, subject: str) -> bytes:
            entries = []
            for (where, ref), (body, media) in sorted(state.manifests.items()):
                data = json.loads(body)
                if (
                    where == repo
                    and ref == _digest(body)
                    and data.get("subject", {}).get("digest") == subject
                ):
                    entries.append(
                        {
                            "mediaType": media,
                            "digest": ref,
                            "size": len(body),
                            "artifactType": data.get("artifactType"),
                            "annotations": data.get("annotations", {}),
                        }
                    )
            return json.dumps(
                {"schemaVersion": 2, "mediaType": _INDEX, "manifests": entries}
            ).encode()

        def do_GET(self) -> None:
            self._route("GET")

        def do_HEAD(self) -> None:
            self._route("HEAD")

        def do_PUT(self) -> None:
            self._route("PUT")

        def do_POST(self) -> None:
            self._route("POST")

    return Handler


_INDEX = "application/vnd.oci.image.index.v1+json"


@contextmanager
def serving(state: Registry | None = None) -> Iterator[Registry]:
    state = state or Registry()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.address = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
