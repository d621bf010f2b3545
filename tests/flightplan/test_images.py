"""Image resolution: reference parsing, the OCI resolver (handler-backed and
against a real registry on loopback), and its use by freeze."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    KeyPair,
    OciResolver,
    PinnedOnlyResolver,
    freeze_plan,
    parse_image_ref,
)
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan import _registry
from tests.flightplan._plans import example_body, example_data

DIGEST = "sha256:" + "c" * 64


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag"),
    [
        ("alpine", "registry-1.docker.io", "library/alpine", "latest"),
        ("alpine:3.20", "registry-1.docker.io", "library/alpine", "3.20"),
        ("acme/tool:1", "registry-1.docker.io", "acme/tool", "1"),
        ("ghcr.io/acme/tool:1.2", "ghcr.io", "acme/tool", "1.2"),
        ("localhost:5000/base:dev", "localhost:5000", "base", "dev"),
    ],
)
def test_parse_image_ref(text: str, registry: str, repository: str, tag: str) -> None:
    ref = parse_image_ref(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (registry, repository, tag, None)


@pytest.mark.parametrize("text", ["Bad/Upper:1", "ghcr.io/x@sha256:short", "x:"])
def test_parse_image_ref_rejects_bad_refs(text: str) -> None:
    with pytest.raises(FlightPlanError) as caught:
        parse_image_ref(text)
    assert caught.value.code == "freeze.invalid_image_ref"


def test_pinned_reference_is_kept_without_any_request() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request expected")

    resolver = OciResolver(transport=httpx.MockTransport(handler))
    pinned = f"ghcr.io/acme/tool@{DIGEST}"
    assert resolver.resolve(pinned) == pinned
    assert PinnedOnlyResolver().resolve(pinned) == pinned
    assert PinnedOnlyResolver().resolve("ghcr.io/acme/tool:1") is None


def test_head_with_manifest_accept_headers_reads_docker_content_digest() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"Docker-Content-Digest": DIGEST})

    resolver = OciResolver(transport=httpx.MockTransport(handler))
    assert resolver.resolve("ghcr.io/acme/tool:1.2") == f"ghcr.io/acme/tool@{DIGEST}"
    (request,) = seen
    assert request.method == "HEAD"
    assert str(request.url) == "https://ghcr.io/v2/acme/tool/manifests/1.2"
    accept = request.headers["Accept"]
    assert "application/vnd.oci.image.index.v1+json" in accept
    assert "application/vnd.docker.distribution.manifest.v2+json" in accept


def test_anonymous_bearer_token_challenge_is_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "auth.example":
            assert request.url.params["scope"] == "repository:acme/tool:pull"
            return httpx.Response(200, json={"token": "t0k"})
        if request.headers.get("Authorization") == "Bearer t0k":
            return httpx.Response(200, headers={"Docker-Content-Digest": DIGEST})
        challenge = 'Bearer realm="https://auth.example/token",service="r",scope="repository:acme/tool:pull"'
        return httpx.Response(401, headers={"WWW-Authenticate": challenge})

    resolver = OciResolver(transport=httpx.MockTransport(handler))
    assert resolver.resolve("r.example/acme/tool:1") == f"r.example/acme/tool@{DIGEST}"


def test_unknown_tag_yields_no_digest() -> None:
    resolver = OciResolver(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    assert resolver.resolve("ghcr.io/acme/tool:nope") is None


def test_loopback_registry_is_spoken_to_over_http() -> None:
    urls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        urls.append(str(request.url))
        return httpx.Response(200, headers={"Docker-Content-Digest": DIGEST})

    OciResolver(transport=httpx.MockTransport(handler)).resolve("localhost:5000/base:1")
    resolver = OciResolver(
        transport=httpx.MockTransport(handler), insecure_hosts=frozenset({"reg.lan"})
    )
    resolver.resolve("reg.lan/base:1")
    assert urls == [
        "http://localhost:5000/v2/base/manifests/1",
        "http://reg.lan/v2/base/manifests/1",
    ]


@pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT)
def test_seed003_freeze_resolves_a_tag_through_a_real_oci_registry(
    tmp_path: Path, keys: KeyPair
) -> None:
    with _registry.running_registry(tmp_path) as address:
        digest = _registry.push_image(address, "flightdeck/base", "1.0")
        resolver = OciResolver()
        assert resolver.resolve(f"{address}/flightdeck/base:1.0") == (
            f"{address}/flightdeck/base@{digest}"
        )
        assert resolver.resolve(f"{address}/flightdeck/base:missing") is None
        data = example_data()
        data["aileron"]["environment"]["image"] = f"{address}/flightdeck/base:1.0"
        source = tmp_path / "SKILL.md"
        source.write_text(emit_skill(data, example_body()))
        outcome = freeze_plan(source, signing_key=keys.private_path, resolver=resolver)
        resolver.close()
    assert outcome.frozen.lock["resolvedImages"] == [
        {"ref": f"{address}/flightdeck/base:1.0", "digest": digest}
    ]
