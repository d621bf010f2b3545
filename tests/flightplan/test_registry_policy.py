"""Where a registry may send the client, and what its answers may be.

httpx's MockTransport stands in for the network here (no request leaves
the test); tests/launch/test_image_pull_bounds.py tries the same against
a real server on loopback.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import httpx
import pytest

from flightdeck.flightplan import FlightPlanError, OciResolver, parse_image_ref
from flightdeck.flightplan.registry._registry_http import (
    MAX_REDIRECTS,
    TOKEN_LIMIT,
    RegistryRefused,
)

BLOB = "sha256:" + "a" * 64


def _fetch(
    tmp_path: Path,
    registry: str,
    handler: object,
    *,
    insecure: frozenset[str] = frozenset(),
    limit: int = 1 << 20,
) -> bytes:
    resolver = OciResolver(transport=httpx.MockTransport(handler), insecure_hosts=insecure)  # type: ignore[arg-type]
    dest = tmp_path / "blob"
    try:
        status = resolver.fetch_to(
            parse_image_ref(f"{registry}/acme/tool@{BLOB}"), "blobs", BLOB, dest, limit=limit
        )
    finally:
        resolver.close()
    assert status == 200
    return dest.read_bytes()


def _redirecting(location: str, seen: list[httpx.Request]) -> object:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.startswith("/v2/"):
            return httpx.Response(307, headers={"Location": location})
        return httpx.Response(200, content=b"blob")

    return handler


@pytest.mark.parametrize(
    ("registry", "location", "insecure"),
    [
        ("registry.example", "https://cdn.example/blob", ()),  # a CDN, as Docker Hub does
        ("localhost:5000", "http://127.0.0.1:5001/blob", ()),  # loopback to loopback
        ("[::1]:5000", "http://localhost:5001/blob", ()),
        ("reg.lan", "http://mirror.lan/blob", ("mirror.lan",)),  # an --insecure-registry
        ("reg.lan:5000", "http://reg.lan:5000/blob", ("reg.lan:5000",)),
    ],
)
def test_redirects_the_policy_allows_are_followed(
    tmp_path: Path, registry: str, location: str, insecure: tuple[str, ...]
) -> None:
    seen: list[httpx.Request] = []
    handler = _redirecting(location, seen)
    assert _fetch(tmp_path, registry, handler, insecure=frozenset(insecure)) == b"blob"
    assert str(seen[-1].url) == location


@pytest.mark.parametrize(
    ("registry", "location", "reason"),
    [
        ("127.0.0.1:5000", "https://cdn.example/blob", "loopback registry"),
        ("localhost:5000", "http://10.0.0.8/blob", "loopback registry"),
        ("localhost:5000", "http://0.0.0.0:5001/blob", "loopback registry"),
        ("registry.example", "https://127.0.0.1/blob", "to loopback"),
        ("registry.example", "http://localhost:5000/blob", "to loopback"),
        ("registry.example", "http://cdn.example/blob", "plain http"),
        ("reg.lan", "http://other.lan/blob", "plain http"),
        ("registry.example", "ftp://cdn.example/blob", "ftp"),
    ],
)
def test_redirects_the_policy_forbids_are_refused_unsent(
    tmp_path: Path, registry: str, location: str, reason: str
) -> None:
    seen: list[httpx.Request] = []
    insecure = frozenset({"reg.lan"})
    with pytest.raises(RegistryRefused) as caught:
        _fetch(tmp_path, registry, _redirecting(location, seen), insecure=insecure)
    assert caught.value.code == "redirect_refused"
    assert reason in caught.value.message
    assert [r.url.host for r in seen] == [httpx.URL(f"//{registry}").host]


def test_a_redirect_loop_ends(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(302, headers={"Location": f"/v2/loop/{len(seen)}"})

    with pytest.raises(RegistryRefused) as caught:
        _fetch(tmp_path, "registry.example", handler)
    assert caught.value.code == "redirect_refused"
    assert len(seen) == MAX_REDIRECTS + 1


def test_the_token_goes_to_the_registry_only(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "auth.example":
            return httpx.Response(200, json={"token": "t0k"})
        if request.url.host == "cdn.example":
            return httpx.Response(200, content=b"blob")
        if request.headers.get("Authorization") != "Bearer t0k":
            challenge = (
                'Bearer realm="https://auth.example/token",scope="repository:acme/tool:pull"'
            )
            return httpx.Response(401, headers={"WWW-Authenticate": challenge})
        return httpx.Response(307, headers={"Location": "https://cdn.example/blob"})

    assert _fetch(tmp_path, "registry.example", handler) == b"blob"
    by_host = {r.url.host: r.headers.get("Authorization") for r in seen}
    assert by_host == {"registry.example": "Bearer t0k", "auth.example": None, "cdn.example": None}


@pytest.mark.parametrize(
    ("realm", "code"),
    [
        ("http://127.0.0.1:9/token", "redirect_refused"),  # a remote registry's realm on loopback
        ("http://auth.example/token", "redirect_refused"),  # plain http off loopback
        ("https://[::1/token", "bad_token"),  # not a URL
        ("/token", "redirect_refused"),  # no scheme
    ],
)
def test_a_token_realm_is_judged_like_a_redirect(tmp_path: Path, realm: str, code: str) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(401, headers={"WWW-Authenticate": f'Bearer realm="{realm}"'})

    with pytest.raises(RegistryRefused) as caught:
        _fetch(tmp_path, "registry.example", handler)
    assert caught.value.code == code
    assert [r.url.host for r in seen] == ["registry.example"]


@pytest.mark.parametrize("size", [TOKEN_LIMIT + 1, 8 << 20])
def test_a_token_answer_is_read_only_to_its_bound(tmp_path: Path, size: int) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "auth.example":
            return httpx.Response(200, content=b'{"token": "' + b"t" * size + b'"}')
        return httpx.Response(
            401, headers={"WWW-Authenticate": 'Bearer realm="https://auth.example/t"'}
        )

    with pytest.raises(RegistryRefused) as caught:
        _fetch(tmp_path, "registry.example", handler)
    assert caught.value.code == "bad_token"


def test_a_token_answer_just_under_its_bound_is_used(tmp_path: Path) -> None:
    token = "t" * (TOKEN_LIMIT - len('{"token": ""}'))

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "auth.example":
            return httpx.Response(200, content=b'{"token": "' + token.encode() + b'"}')
        if request.headers.get("Authorization") == f"Bearer {token}":
            return httpx.Response(200, content=b"blob")
        return httpx.Response(
            401, headers={"WWW-Authenticate": 'Bearer realm="https://auth.example/t"'}
        )

    assert _fetch(tmp_path, "registry.example", handler) == b"blob"


def test_a_body_past_its_limit_is_too_large_and_an_error_body_is_not_read(tmp_path: Path) -> None:
    read: list[int] = []

    def stream(total: int) -> object:
        class Body(httpx.SyncByteStream):
            def __iter__(self):  # type: ignore[no-untyped-def]
                for _ in range(total):
                    read.append(1)
                    yield b"x" * 1024

        return Body()

    def huge(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=stream(4096))  # type: ignore[arg-type]

    with pytest.raises(RegistryRefused) as caught:
        _fetch(tmp_path, "registry.example", huge, limit=10 * 1024)
    assert caught.value.code == "too_large"
    assert len(read) == 11  # stopped at the first chunk past the limit

    read.clear()

    def failing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, stream=stream(4096))  # type: ignore[arg-type]

    resolver = OciResolver(transport=httpx.MockTransport(failing))
    try:
        ref = parse_image_ref(f"registry.example/acme/tool@{BLOB}")
        assert resolver.fetch_to(ref, "blobs", BLOB, tmp_path / "b", limit=1 << 20) == 500
    finally:
        resolver.close()
    assert read == []


def test_an_insecure_registry_named_with_its_port_is_spoken_to_over_http(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"blob")

    _fetch(tmp_path, "reg.lan:5000", handler, insecure=frozenset({"reg.lan:5000"}))
    _fetch(tmp_path, "other.lan:5000", handler, insecure=frozenset({"reg.lan:5000"}))
    assert [str(r.url).split("/v2/")[0] for r in seen] == [
        "http://reg.lan:5000",
        "https://other.lan:5000",
    ]


def test_a_call_after_the_deadline_is_not_sent(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"blob")

    resolver = OciResolver(transport=httpx.MockTransport(handler))
    try:
        with pytest.raises(RegistryRefused) as caught:
            resolver.fetch_to(
                parse_image_ref(f"registry.example/acme/tool@{BLOB}"),
                "blobs",
                BLOB,
                tmp_path / "blob",
                limit=1 << 20,
                deadline=time.monotonic() - 1,
            )
    finally:
        resolver.close()
    assert caught.value.code == "pull_timeout"
    assert seen == []


@pytest.mark.parametrize("token", ["café", "tab\tbed", ""])
def test_a_token_that_is_no_header_value_is_bad_token(tmp_path: Path, token: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "auth.example":
            return httpx.Response(200, json={"token": token})
        return httpx.Response(
            401, headers={"WWW-Authenticate": 'Bearer realm="https://auth.example/t"'}
        )

    with pytest.raises(RegistryRefused) as caught:
        _fetch(tmp_path, "registry.example", handler)
    assert caught.value.code == "bad_token"


def _resolver(handler: object) -> OciResolver:
    return OciResolver(transport=httpx.MockTransport(handler))  # type: ignore[arg-type]


def test_a_digest_missing_from_head_is_the_digest_of_the_body_get_serves() -> None:
    body = b'{"schemaVersion": 2}'

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body if request.method == "GET" else b"")

    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    assert _resolver(handler).resolve("registry.example/acme/tool:1") == (
        f"registry.example/acme/tool@{digest}"
    )


def test_a_manifest_body_over_4_mib_is_refused_at_freeze() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * (5 << 20) if request.method == "GET" else b"")

    with pytest.raises(FlightPlanError) as caught:
        _resolver(handler).resolve("registry.example/acme/tool:1")
    assert caught.value.code == "freeze.registry_refused"


def test_a_digest_header_on_an_error_is_not_a_resolution() -> None:
    digest = "sha256:" + "b" * 64

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, headers={"Docker-Content-Digest": digest})

    assert _resolver(handler).resolve("registry.example/acme/tool:1") is None


def test_a_challenge_other_than_bearer_asks_for_no_token(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            401, headers={"WWW-Authenticate": 'Basic realm="https://auth.example/t"'}
        )

    resolver = _resolver(handler)
    ref = parse_image_ref(f"registry.example/acme/tool@{BLOB}")
    assert resolver.fetch_to(ref, "blobs", BLOB, tmp_path / "b", limit=1 << 20) == 401
    assert [r.url.host for r in seen] == ["registry.example"]
