"""Resolving an OCI image reference to a content-addressed digest.

`ImageResolver` is the seam freeze calls; `OciResolver` speaks the OCI
distribution API: `HEAD /v2/<name>/manifests/<tag>` with the manifest media
types in `Accept`, reading `Docker-Content-Digest`. A reference already pinned
with `@sha256:` is kept as it is and never touches the network. Loopback
registries (`localhost:PORT/...`, `127.0.0.1:PORT/...`) and hosts listed in
`insecure_hosts` are spoken to over plain http. The HTTP itself, bounded and
judged by the registry policy, is `_registry_http`'s.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import httpx

from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.registry._registry_http import (
    NO_DEADLINE,
    RegistryRefused,
    RegistrySession,
)

MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
# What registries accept as a manifest (the distribution spec's 4 MiB).
MANIFEST_LIMIT = 4 << 20
_T = TypeVar("_T")
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
    """The OCI distribution client freeze resolves tags with and launch pulls
    pinned images with. Its HTTP is bounded (`_registry_http`): redirects
    judged by the registry policy, bodies counted, every call under a deadline.
    """

    def __init__(
        self,
        *,
        insecure_hosts: frozenset[str] = frozenset(),
        transport: httpx.BaseTransport | None = None,
        timeout: float = 10.0,
        resolve_timeout: float = 60.0,
    ) -> None:
        self._http = RegistrySession(insecure_hosts, transport, timeout)
        self._resolve_timeout = resolve_timeout

    def resolve(self, ref: str) -> str | None:
        parsed = parse_image_ref(ref)
        if parsed.digest:
            return ref  # already pinned: kept as written
        url = f"{self._scheme(parsed.registry)}://{parsed.registry}/v2/{parsed.repository}/manifests/{parsed.tag}"
        headers = {"Accept": ", ".join(MANIFEST_TYPES)}
        deadline = time.monotonic() + self._resolve_timeout

        def head(response: httpx.Response) -> tuple[int, str | None]:
            return response.status_code, response.headers.get("Docker-Content-Digest")

        def get(response: httpx.Response) -> tuple[int, str | None]:
            if response.status_code != 200:
                return response.status_code, None
            digest = response.headers.get("Docker-Content-Digest")
            body = self._http.stream(response, deadline, MANIFEST_LIMIT)
            return 200, digest or "sha256:" + hashlib.sha256(body).hexdigest()

        try:
            status, digest = self._call("HEAD", url, headers, parsed.registry, deadline, head)
            if status == 200 and not digest:
                # Some registries omit the header on HEAD; the digest of the
                # manifest bytes served by GET is the digest by definition.
                status, digest = self._call("GET", url, headers, parsed.registry, deadline, get)
        except httpx.HTTPError as exc:
            raise FlightPlanError(
                "freeze.registry_unreachable", f"cannot reach {parsed.registry}: {exc}"
            ) from None
        except RegistryRefused as exc:
            raise FlightPlanError(
                "freeze.registry_refused",
                f"{parsed.registry}: {exc.message} ({exc.code})",
                hint="freeze resolves tags only through registries that answer within bounds"
                " and redirect only where the registry policy allows",
            ) from None
        if status != 200 or not digest or not _DIGEST.match(digest):
            return None
        return f"{parsed.registry}/{parsed.repository}@{digest}"

    def fetch_to(
        self,
        ref: ImageRef,
        kind: str,
        reference: str,
        dest: Path,
        *,
        limit: int,
        accept: str = "",
        deadline: float = NO_DEADLINE,
    ) -> int:
        """GET `/v2/<repository>/<kind>/<reference>` (kind: manifests or
        blobs) with the same scheme choice and anonymous token auth as
        `resolve`, streaming the body into `dest`; the status code. Raises
        httpx.HTTPError, or RegistryRefused (`redirect_refused`, `bad_token`,
        `pull_timeout`, and `too_large` past `limit` bytes: a registry
        cannot fill the disk)."""
        url = (
            f"{self._scheme(ref.registry)}://{ref.registry}/v2/{ref.repository}/{kind}/{reference}"
        )
        headers = {"Accept": accept} if accept else {}

        def save(response: httpx.Response) -> int:
            if response.status_code != 200:
                return response.status_code
            with dest.open("wb") as out:
                self._http.stream(response, deadline, limit, out)
            return 200

        return self._call("GET", url, headers, ref.registry, deadline, save)

    def close(self) -> None:
        self._http.close()

    def _scheme(self, registry: str) -> str:
        return "http" if self._http.plain_http(registry) else "https"

    def _call(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        registry: str,
        deadline: float,
        consume: Callable[[httpx.Response], _T],
    ) -> _T:
        """`consume` the answer, once more with an anonymous token after a
        `Bearer` challenge. `consume` reads no body but a 200's."""
        with self._http.open(
            method, url, headers, registry=registry, deadline=deadline
        ) as response:
            challenge = response.headers.get("WWW-Authenticate", "")
            if response.status_code != 401 or not challenge.lower().startswith("bearer "):
                return consume(response)
            refused = consume(response)
        token = self._http.token(challenge, registry, deadline)
        if token is None:
            return refused
        authorized = {**headers, "Authorization": f"Bearer {token}"}
        with self._http.open(
            method, url, authorized, registry=registry, deadline=deadline
        ) as response:
            return consume(response)
