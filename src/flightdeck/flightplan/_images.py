"""Resolving an OCI image reference to a content-addressed digest.

`ImageResolver` is the seam freeze calls; `OciResolver` speaks the OCI
distribution API: `HEAD /v2/<name>/manifests/<tag>` with the manifest media
types in `Accept`, reading `Docker-Content-Digest`. A reference already pinned
with `@sha256:` is kept as it is and never touches the network. Loopback
registries (`localhost:PORT/...`, `127.0.0.1:PORT/...`) and hosts listed in
`insecure_hosts` are spoken to over plain http.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx

from flightdeck.flightplan._errors import FlightPlanError

MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
DOCKER_HUB = "registry-1.docker.io"


@dataclass(frozen=True)
class ImageRef:
    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def pinned(self) -> str:
        """The `registry/repository@sha256:...` form (needs a digest)."""
        return f"{self.registry}/{self.repository}@{self.digest}"


def parse_image_ref(text: str) -> ImageRef:
    """Split `[registry/]repository[:tag][@sha256:hex]`; Docker Hub is the default."""
    rest, _, digest = text.partition("@")
    if digest and not _DIGEST.match(digest):
        raise FlightPlanError("freeze.invalid_image_ref", f"'{text}': bad digest '{digest}'")
    first, slash, remainder = rest.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, remainder
    else:
        registry, path = DOCKER_HUB, rest
        if "/" not in path:
            path = f"library/{path}"
    repository, colon, tag = path.partition(":")
    if not re.fullmatch(r"[a-z0-9]+([._/-][a-z0-9]+)*", repository) or (colon and not tag):
        raise FlightPlanError("freeze.invalid_image_ref", f"'{text}' is not an OCI image reference")
    return ImageRef(registry, repository, tag or (None if digest else "latest"), digest or None)


class ImageResolver(Protocol):
    """Resolves a reference to `<registry>/<repository>@sha256:<hex>`, or None."""

    def resolve(self, ref: str) -> str | None: ...


class PinnedOnlyResolver:
    """Keeps pinned references, resolves nothing else (offline freeze)."""

    def resolve(self, ref: str) -> str | None:
        parsed = parse_image_ref(ref)
        return ref if parsed.digest else None


class OciResolver:
    def __init__(
        self,
        *,
        insecure_hosts: frozenset[str] = frozenset(),
        transport: httpx.BaseTransport | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._insecure = insecure_hosts
        self._last_challenge = ""
        self._client = httpx.Client(transport=transport, timeout=timeout, follow_redirects=True)

    def resolve(self, ref: str) -> str | None:
        parsed = parse_image_ref(ref)
        if parsed.digest:
            return ref  # already pinned: kept as written
        scheme = "http" if self._plain_http(parsed.registry) else "https"
        url = f"{scheme}://{parsed.registry}/v2/{parsed.repository}/manifests/{parsed.tag}"
        headers = {"Accept": ", ".join(MANIFEST_TYPES)}
        try:
            response = self._request("HEAD", url, headers)
            digest = response.headers.get("Docker-Content-Digest")
            if response.status_code == 200 and not digest:
                # Some registries omit the header on HEAD; the digest of the
                # manifest bytes served by GET is the digest by definition.
                response = self._request("GET", url, headers)
                digest = response.headers.get("Docker-Content-Digest")
                if response.status_code == 200 and not digest:
                    digest = "sha256:" + hashlib.sha256(response.content).hexdigest()
        except httpx.HTTPError as exc:
            raise FlightPlanError(
                "freeze.registry_unreachable", f"cannot reach {parsed.registry}: {exc}"
            ) from None
        if response.status_code != 200 or not digest or not _DIGEST.match(digest):
            return None
        return f"{parsed.registry}/{parsed.repository}@{digest}"

    def fetch(self, ref: ImageRef, kind: str, reference: str, accept: str = "") -> httpx.Response:
        """GET `/v2/<repository>/<kind>/<reference>` (kind: manifests or blobs)
        with the same scheme choice and anonymous token auth as `resolve`;
        launch pulls a pinned image through it. Raises httpx.HTTPError."""
        scheme = "http" if self._plain_http(ref.registry) else "https"
        url = f"{scheme}://{ref.registry}/v2/{ref.repository}/{kind}/{reference}"
        return self._request("GET", url, {"Accept": accept} if accept else {})

    def fetch_to(
        self, ref: ImageRef, kind: str, reference: str, dest: Path, *, limit: int, accept: str = ""
    ) -> int:
        """Like `fetch`, streaming the body into `dest` and stopping past
        `limit` bytes (a registry cannot fill the disk); the status code."""
        scheme = "http" if self._plain_http(ref.registry) else "https"
        url = f"{scheme}://{ref.registry}/v2/{ref.repository}/{kind}/{reference}"
        headers = {"Accept": accept} if accept else {}
        status = self._stream_to(url, headers, dest, limit)
        if status == 401 and self._last_challenge.lower().startswith("bearer "):
            token = self._anonymous_token(self._last_challenge)
            if token:
                headers["Authorization"] = f"Bearer {token}"
                status = self._stream_to(url, headers, dest, limit)
        return status

    def _stream_to(self, url: str, headers: dict[str, str], dest: Path, limit: int) -> int:
        with self._client.stream("GET", url, headers=headers) as response:
            self._last_challenge = response.headers.get("WWW-Authenticate", "")
            if response.status_code != 200:
                return response.status_code
            written = 0
            with dest.open("wb") as out:
                for chunk in response.iter_bytes(1 << 20):
                    written += len(chunk)
                    out.write(chunk)
                    if written > limit:
                        break  # the caller's size check refuses it
            return 200

    def close(self) -> None:
        self._client.close()

    def _plain_http(self, registry: str) -> bool:
        host = registry.rsplit(":", 1)[0] if not registry.startswith("[") else registry
        return registry in self._insecure or host in self._insecure or host in _LOOPBACK

    def _request(self, method: str, url: str, headers: dict[str, str]) -> httpx.Response:
        response = self._client.request(method, url, headers=headers)
        challenge = response.headers.get("WWW-Authenticate", "")
        if response.status_code == 401 and challenge.lower().startswith("bearer "):
            token = self._anonymous_token(challenge)
            if token:
                response = self._client.request(
                    method, url, headers={**headers, "Authorization": f"Bearer {token}"}
                )
        return response

    def _anonymous_token(self, challenge: str) -> str | None:
        # Public registries (Docker Hub, ghcr.io) hand out anonymous pull tokens.
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        realm = params.pop("realm", None)
        if not realm:
            return None
        response = self._client.get(realm, params=params)
        if response.status_code != 200:
            return None
        body = response.json()
        token = body.get("token") or body.get("access_token")
        return token if isinstance(token, str) else None
