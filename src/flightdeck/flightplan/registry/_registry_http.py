"""HTTP with an OCI registry, every answer bounded and every redirect judged.

A registry is not trusted with anything but bytes the pin checks: it may
answer slowly, at length, with HTML where JSON belongs, or send the client
elsewhere. So:

- redirects are followed by hand, at most `MAX_REDIRECTS`, and only where
  the registry policy allows: a loopback registry only to loopback, any
  other registry never to loopback, and plain http only to a loopback host
  or one named by `--insecure-registry` (the token realm a challenge names
  is judged the same way); an `Authorization` header never leaves the
  registry's own origin (httpx drops it on a cross-origin redirect);
- bodies are streamed and counted: a token answer over `TOKEN_LIMIT`, or a
  body over what the caller allows, is refused, and error bodies are never
  read;
- every call carries the caller's deadline, checked as data arrives, so a
  registry sending a byte a second ends at the deadline, not never;
- anything refused is a `RegistryRefused` with a code (`redirect_refused`,
  `bad_token`, `too_large`, `pull_timeout`); transport failures stay
  `httpx.HTTPError`.

Hosts are judged by name: a public name that resolves to a loopback or
private address is not detected (plain http to it is still refused).
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import math
import re
import time
from collections.abc import Iterator
from typing import IO

import httpx

from flightdeck._json import read_json

MAX_REDIRECTS = 5
TOKEN_LIMIT = 64 << 10
_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')


class RegistryRefused(Exception):
    """An answer refused by policy or by a bound."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host(registry: str) -> str:
    """`host` of a `host[:port]` registry name (IPv6 in brackets kept)."""
    if registry.startswith("["):
        return registry.split("]", 1)[0] + "]"
    return registry.rsplit(":", 1)[0]


class RegistrySession:
    def __init__(
        self, insecure_hosts: frozenset[str], transport: httpx.BaseTransport | None, timeout: float
    ) -> None:
        self._insecure = insecure_hosts
        self._timeout = timeout
        # Identity encoding: a compressed body would be inflated past the
        # bounds before they could count it.
        self._client = httpx.Client(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            headers={"Accept-Encoding": "identity"},
        )

    def close(self) -> None:
        self._client.close()

    def plain_http(self, registry: str) -> bool:
        host = _host(registry)
        return registry in self._insecure or host in self._insecure or is_loopback(host)

    def judge(self, registry: str, url: httpx.URL, what: str) -> None:
        """Refuse a redirect or token realm the registry policy forbids."""
        host = url.host
        netloc = f"{host}:{url.port}" if url.port else host
        if url.scheme not in ("http", "https"):
            raise RegistryRefused("redirect_refused", f"{registry} sent {what} to {url.scheme}:")
        if is_loopback(_host(registry)) and not is_loopback(host):
            raise RegistryRefused(
                "redirect_refused", f"the loopback registry {registry} sent {what} to {netloc}"
            )
        if not is_loopback(_host(registry)) and is_loopback(host):
            raise RegistryRefused(
                "redirect_refused", f"{registry} sent {what} to loopback ({netloc})"
            )
        insecure = host in self._insecure or netloc in self._insecure or is_loopback(host)
        if url.scheme == "http" and not insecure:
            raise RegistryRefused(
                "redirect_refused",
                f"{registry} sent {what} to plain http on {netloc}, which is neither loopback"
                " nor an --insecure-registry",
            )

    def _timeout_until(self, deadline: float) -> httpx.Timeout:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RegistryRefused("pull_timeout", "the registry did not answer before the deadline")
        return httpx.Timeout(min(self._timeout, left))

    @contextlib.contextmanager
    def open(
        self,
        method: str,
        url: str | httpx.URL,
        headers: dict[str, str],
        *,
        registry: str,
        deadline: float,
        content: bytes | None = None,
    ) -> Iterator[httpx.Response]:
        """The response after the redirects the policy allows, streaming;
        closed on exit. `content` is sent again on a 307/308 (it is bytes,
        never a stream, so a redirect cannot send half a body). Raises
        RegistryRefused or httpx.HTTPError."""
        request = self._client.build_request(
            method, url, headers=headers, content=content, timeout=self._timeout_until(deadline)
        )
        for _ in range(MAX_REDIRECTS + 1):
            with self._timing(deadline):
                response = self._client.send(request, stream=True)
            if not response.has_redirect_location or response.next_request is None:
                try:
                    with self._timing(deadline):
                        yield response
                finally:
                    response.close()
                return
            request = response.next_request
            response.close()
            self.judge(registry, request.url, "a redirect")
            request.extensions["timeout"] = self._timeout_until(deadline).as_dict()
        raise RegistryRefused(
            "redirect_refused", f"{registry} redirected more than {MAX_REDIRECTS} times"
        )

    @contextlib.contextmanager
    def _timing(self, deadline: float) -> Iterator[None]:
        try:
            yield
        except httpx.TimeoutException:
            if time.monotonic() + 0.5 >= deadline:
                raise RegistryRefused(
                    "pull_timeout", "the registry's answer did not arrive before the deadline"
                ) from None
            raise

    def stream(
        self, response: httpx.Response, deadline: float, limit: int, out: IO[bytes] | None = None
    ) -> bytes:
        """The body, at most `limit` bytes (`too_large` past it), written
        to `out` when given (then b"" is returned)."""
        kept: list[bytes] = []
        total = 0
        for chunk in response.iter_bytes():
            if time.monotonic() > deadline:
                raise RegistryRefused(
                    "pull_timeout", "the registry's answer did not end before the deadline"
                )
            total += len(chunk)
            if total > limit:
                raise RegistryRefused("too_large", f"an answer of more than {limit:,} bytes")
            if out is None:
                kept.append(chunk)
            else:
                out.write(chunk)
        return b"".join(kept)

    def token(
        self,
        challenge: str,
        registry: str,
        deadline: float,
        secret: tuple[str, str] | None = None,
    ) -> str | None:
        """A token for a `Bearer` challenge: anonymous (Docker Hub, ghcr.io
        hand out pull tokens), or asked with the user's `secret` (docker
        login's user and password or identity token) for a push; None when
        the realm does not give one."""
        params = dict(_CHALLENGE_PARAM.findall(challenge))
        realm = params.pop("realm", None)
        if not realm:
            return None
        try:
            url = httpx.URL(realm)
        except httpx.InvalidURL:
            raise RegistryRefused(
                "bad_token", f"{registry} named the token realm {realm!r}"
            ) from None
        self.judge(registry, url, "its token request")
        headers = {}
        if secret is not None:
            basic = base64.b64encode(f"{secret[0]}:{secret[1]}".encode()).decode()
            headers["Authorization"] = f"Basic {basic}"
        with self.open(
            "GET", url.copy_merge_params(params), headers, registry=registry, deadline=deadline
        ) as answer:
            if answer.status_code != 200:
                return None
            try:
                body = self.stream(answer, deadline, TOKEN_LIMIT)
            except RegistryRefused as exc:
                if exc.code != "too_large":
                    raise
                raise RegistryRefused(
                    "bad_token", f"{registry}'s token answer is over {TOKEN_LIMIT:,} bytes"
                ) from None
        try:
            data = read_json(body)
        except ValueError:
            raise RegistryRefused("bad_token", f"{registry}'s token answer is not JSON") from None
        token = (data.get("token") or data.get("access_token")) if isinstance(data, dict) else None
        if not isinstance(token, str) or not token or not (token.isascii() and token.isprintable()):
            raise RegistryRefused("bad_token", f"{registry}'s token answer holds no usable token")
        return token


NO_DEADLINE = math.inf

__all__ = [
    "MAX_REDIRECTS",
    "NO_DEADLINE",
    "TOKEN_LIMIT",
    "RegistryRefused",
    "RegistrySession",
    "is_loopback",
]
