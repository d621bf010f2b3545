"""Reading and writing one OCI repository: the calls publish and install make.

The same bounded session as pulls (`_registry_http`): redirects judged,
bodies counted, one deadline for the whole operation. On top of it:

- blobs: `HEAD` (skip what is there), monolithic upload (`POST` then `PUT
  ?digest=`; with `mount_from` a cross-repository mount first), and `GET`
  into memory or a file, read at most the declared size and refused unless
  its SHA-256 is the digest asked for;
- manifests: `PUT` by tag or digest (the registry's `Docker-Content-Digest`
  must be the digest of the bytes sent), `GET` bounded, digest computed;
- the referrers API (`GET /v2/<repo>/referrers/<digest>`), None where the
  registry has none.

The upload `Location` a registry answers with is judged like a redirect:
a registry cannot send the blob elsewhere. Credentials come from `auth`
(a host's user and secret, docker's config); a `Bearer` challenge is
answered with a token fetched with them (or anonymously), a `Basic` one
with them directly. Every refusal is a `RegistryRefused` with a code:
`unreachable`, `unauthorized`, `not_found`, `rejected`, `digest_mismatch`,
`too_large`, and the session's own.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx

from flightdeck.flightplan.registry._images import ImageRef
from flightdeck.flightplan.registry._registry_http import RegistryRefused, RegistrySession

_T = TypeVar("_T")
Credentials = Callable[[str], "tuple[str, str] | None"]
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)


@dataclass(frozen=True)
class Fetched:
    body: bytes
    media_type: str
    digest: str


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class OciClient:
    def __init__(
        self,
        *,
        insecure_hosts: frozenset[str] = frozenset(),
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        total: float = 900.0,
        auth: Credentials | None = None,
    ) -> None:
        self._http = RegistrySession(insecure_hosts, transport, timeout)
        self._deadline = time.monotonic() + total
        self._auth = auth
        self._tokens: dict[tuple[str, str], str] = {}

    def close(self) -> None:
        self._http.close()

    def _url(self, ref: ImageRef, kind: str, reference: str) -> str:
        scheme = "http" if self._http.plain_http(ref.registry) else "https"
        return f"{scheme}://{ref.registry}/v2/{ref.repository}/{kind}/{reference}"

    # -- blobs -------------------------------------------------------------

    def has_blob(self, ref: ImageRef, digest: str) -> bool:
        status = self._call("HEAD", self._url(ref, "blobs", digest), {}, ref, lambda r: r)
        if status.status_code in (200, 404):
            return status.status_code == 200
        raise _status(ref, status, f"HEAD blob {digest}")

    def push_blob(
        self,
        ref: ImageRef,
        digest: str,
        data: bytes | Callable[[], bytes],
        mount_from: str | None = None,
    ) -> bool:
        """Upload `data` (or what it returns: fetched only when needed) as
        `digest`, unless the repository has it already or a mount from the
        repository `mount_from` of the same registry gives it; True when
        bytes were sent."""
        if self.has_blob(ref, digest):
            return False
        start = self._url(ref, "blobs", "uploads/")
        if mount_from and mount_from != ref.repository:
            start += f"?mount={digest}&from={mount_from}"
        started = self._call("POST", start, {"Content-Length": "0"}, ref, lambda r: r)
        if started.status_code == 201 and mount_from:
            return False  # mounted from the other repository: no bytes moved
        if started.status_code != 202 or not started.headers.get("Location"):
            raise _status(ref, started, "starting a blob upload")
        location = httpx.URL(start).join(started.headers["Location"])
        self._http.judge(ref.registry, location, "a blob upload")
        target = location.copy_merge_params({"digest": digest})
        headers = {"Content-Type": "application/octet-stream"}
        body = data if isinstance(data, bytes) else data()
        if sha256(body) != digest:
            raise RegistryRefused("digest_mismatch", f"the bytes to upload are not {digest}")
        done = self._call("PUT", target, headers, ref, lambda r: r, content=body)
        if done.status_code != 201:
            raise _status(ref, done, f"uploading blob {digest}")
        _check_echo(ref, done, digest)
        return True

    def blob(self, ref: ImageRef, digest: str, size: int, dest: Path | None = None) -> bytes:
        """The blob's bytes (or b"" when written to `dest`), at most `size`
        of them, refused unless exactly `digest`."""

        def read(response: httpx.Response) -> bytes:
            if response.status_code != 200:
                raise _status(ref, response, f"blob {digest}")
            if dest is None:
                return self._read(response, size, digest)
            with dest.open("wb") as out:
                self._http.stream(response, self._deadline, size, out)
            return b""

        try:
            body = self._call("GET", self._url(ref, "blobs", digest), {}, ref, read)
        except RegistryRefused as exc:
            if exc.code != "too_large":
                raise
            raise RegistryRefused(
                "digest_mismatch", f"{ref.registry} serves more than {size:,} bytes as {digest}"
            ) from None
        actual = sha256(body) if dest is None else _file_digest(dest)
        if actual != digest:
            raise RegistryRefused(
                "digest_mismatch", f"{ref.registry} serves {actual} as blob {digest}"
            )
        return body

    # -- manifests ---------------------------------------------------------

    def manifest(self, ref: ImageRef, reference: str, limit: int) -> Fetched:
        """The manifest (or index) at a tag or digest, at most `limit` bytes."""

        def read(response: httpx.Response) -> Fetched:
            if response.status_code != 200:
                raise _status(ref, response, f"manifest {reference}")
            body = self._read(response, limit, reference)
            media = response.headers.get("Content-Type", "").split(";")[0].strip()
            return Fetched(body, media, sha256(body))

        headers = {"Accept": ", ".join(MANIFEST_TYPES)}
        fetched = self._call("GET", self._url(ref, "manifests", reference), headers, ref, read)
        if reference.startswith("sha256:") and fetched.digest != reference:
            raise RegistryRefused(
                "digest_mismatch", f"{ref.registry} serves {fetched.digest} as {reference}"
            )
        return fetched

    def push_manifest(self, ref: ImageRef, reference: str, body: bytes, media_type: str) -> bool:
        """PUT the manifest under a tag or its digest; True when the
        registry says it indexed its subject (`OCI-Subject`)."""
        url = self._url(ref, "manifests", reference)
        done = self._call("PUT", url, {"Content-Type": media_type}, ref, lambda r: r, content=body)
        if done.status_code != 201:
            raise _status(ref, done, f"manifest {reference}")
        _check_echo(ref, done, sha256(body))
        return bool(done.headers.get("OCI-Subject"))

    def referrers(self, ref: ImageRef, digest: str, limit: int) -> bytes | None:
        """The referrers index of `digest`, or None without the API."""

        def read(response: httpx.Response) -> bytes | None:
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                raise _status(ref, response, f"referrers of {digest}")
            if "index" not in response.headers.get("Content-Type", ""):
                return None  # a server answering a page for unknown paths
            return self._read(response, limit, f"referrers of {digest}")

        return self._call("GET", self._url(ref, "referrers", digest), {}, ref, read)

    # -- the call ----------------------------------------------------------

    def _read(self, response: httpx.Response, limit: int, what: str) -> bytes:
        try:
            return self._http.stream(response, self._deadline, limit)
        except RegistryRefused as exc:
            if exc.code != "too_large":
                raise
            raise RegistryRefused("too_large", f"{what}: more than {limit:,} bytes") from None

    def _call(
        self,
        method: str,
        url: str | httpx.URL,
        headers: dict[str, str],
        ref: ImageRef,
        consume: Callable[[httpx.Response], _T],
        content: bytes | None = None,
    ) -> _T:
        """`consume` the answer; after a 401 challenge, once more with
        credentials (a token for `Bearer`, the secret itself for `Basic`)."""
        registry = ref.registry
        scope = f"repository:{ref.repository}:pull,push"
        token = self._tokens.get((registry, scope))
        sent = {**headers, **({"Authorization": f"Bearer {token}"} if token else {})}
        try:
            with self._http.open(
                method, url, sent, registry=registry, deadline=self._deadline, content=content
            ) as response:
                challenge = response.headers.get("WWW-Authenticate", "")
                if response.status_code != 401:
                    return consume(response)
            authorization = self._authorize(challenge, registry, scope)
            if authorization is None:
                raise _unauthorized(registry, 401)
            retry = {**headers, "Authorization": authorization}
            with self._http.open(
                method, url, retry, registry=registry, deadline=self._deadline, content=content
            ) as response:
                if response.status_code == 401:
                    raise _unauthorized(registry, 401)
                return consume(response)
        except httpx.HTTPError as exc:
            raise RegistryRefused("unreachable", f"cannot reach {registry}: {exc}") from None

    def _authorize(self, challenge: str, registry: str, scope: str) -> str | None:
        secret = self._auth(registry) if self._auth else None
        kind = challenge.split(" ", 1)[0].lower()
        if kind == "basic" and secret is not None:
            return "Basic " + base64.b64encode(f"{secret[0]}:{secret[1]}".encode()).decode()
        if kind != "bearer":
            return None
        if "scope=" not in challenge:
            challenge += f',scope="{scope}"'
        token = self._http.token(challenge, registry, self._deadline, secret)
        if token is None:
            return None
        self._tokens[(registry, scope)] = token
        return f"Bearer {token}"


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _check_echo(ref: ImageRef, response: httpx.Response, digest: str) -> None:
    echoed = response.headers.get("Docker-Content-Digest")
    if echoed and echoed != digest:
        raise RegistryRefused(
            "rejected", f"{ref.registry} stored {echoed} for the bytes of {digest}"
        )


def _unauthorized(registry: str, status: int) -> RegistryRefused:
    return RegistryRefused(
        "unauthorized",
        f"{registry} answered {status}: not allowed without other credentials"
        f" (run `docker login {registry}`)",
    )


def _status(ref: ImageRef, response: httpx.Response, what: str) -> RegistryRefused:
    status = response.status_code
    if status in (401, 403):
        return _unauthorized(ref.registry, status)
    if status == 404:
        return RegistryRefused("not_found", f"{ref.registry}/{ref.repository}: no {what}")
    return RegistryRefused("rejected", f"{ref.registry} answered {status} for {what}")


__all__ = ["MANIFEST_TYPES", "Credentials", "Fetched", "OciClient", "sha256"]
