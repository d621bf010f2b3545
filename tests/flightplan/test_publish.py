"""Issue 30: publish a frozen plan to a registry, install it on another machine.

Two homes stand for two machines; they share nothing but the registry:
Debian's docker-registry on loopback (no referrers API: the fallback tag),
and the tests' own small registry (`_oci_server`, with the referrers API).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from tests.flightplan import _oci_server, _registry
from tests.flightplan._machines import Machine, freeze, hello_plan, publisher, trust

needs_registry = pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT)
ARTIFACT = "application/vnd.aileron.flightplan.artifact.v1+json"


@needs_registry
def test_publish_install_launch_on_a_second_machine(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    source = hello_plan(tmp_path / "src", text="from machine a")
    frozen = freeze(first, source, keys, "1.0.0")
    (tmp_path / "reg").mkdir()
    with _registry.running_registry(tmp_path / "reg") as address:
        repo = f"{address}/acme/plans"
        published = first.ok("publish", "hello-plan@1.0.0", "--registry", repo)
        assert published["tags"] == [frozen["id"], "1.0.0", "latest"]
        assert published["subject"] is None and published["referrers"] is None
        manifest = httpx.get(
            f"http://{address}/v2/acme/plans/manifests/latest",
            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
        )
        data = manifest.json()
        assert data["artifactType"] == ARTIFACT and "subject" not in data
        assert data["annotations"]["org.opencontainers.image.created"] == "1970-01-01T00:00:00Z"
        assert data["annotations"]["ai.aileron.flightplan.version"] == frozen["id"]
        assert [
            layer["annotations"]["org.opencontainers.image.title"] for layer in data["layers"]
        ] == [
            "SKILL.md",
            "lock.json",
            "SKILL.md.sig",
            "signer.pub.pem",
        ]

        # Re-publish: the same bytes, nothing uploaded, the same digest.
        again = first.ok("publish", "hello-plan", "--registry", repo)
        assert again["digest"] == published["digest"] and again["uploaded"] == 0

        second = Machine(tmp_path / "b")
        trust(second, keys)
        shutil.rmtree(tmp_path / "src")  # the workspace is gone
        installed = second.ok("install", repo)
        assert installed["created"] is True and installed["id"] == frozen["id"]
        assert installed["origin"] == {
            "registry": address,
            "repository": "acme/plans",
            "tag": "latest",
            "digest": published["digest"],
        }
        before = second.stored()
        twice = second.ok("install", f"{repo}:1.0.0")
        assert twice["created"] is False and second.stored() == before
    out_a, out_b = tmp_path / "out-a", tmp_path / "out-b"
    assert first.run("launch", "hello-plan@1.0.0", "--out-dir", str(out_a)).returncode == 0
    done = second.run("launch", "hello-plan@1.0.0", "--out-dir", str(out_b))
    assert done.returncode == 0, done.stderr
    assert (out_b / "result.txt").read_bytes() == (out_a / "result.txt").read_bytes()
    assert second.ok("verify", "hello-plan")["content_hash"] == frozen["content_hash"]


def test_the_referrers_api_is_used_where_the_registry_has_it(tmp_path: Path) -> None:
    """Publish an image plan to a registry with the referrers API: the image
    is copied by digest, the artifact names it as subject, no fallback tag."""
    from tests.launch import _image

    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    with _oci_server.serving() as registry:
        digest = _image.push(registry.address, "src/tool", "1", [(b"a layer", False)])
        source = hello_plan(tmp_path / "src")
        text = source.read_text().replace(
            "aileron:\n", f"aileron:\n  environment:\n    image: {registry.address}/src/tool:1\n", 1
        )
        source.write_text(text)
        freeze(first, source, keys, "1.0.0")
        result = first.ok("publish", "hello-plan", "--registry", f"{registry.address}/acme/plans")
        assert result["subject"] == digest and result["referrers"] == "api"
        assert ("acme/plans", digest) in registry.manifests  # the image, copied
        artifact = json.loads(registry.manifest("acme/plans", "latest"))
        assert artifact["subject"]["digest"] == digest
        assert not any(ref.startswith("sha256-") for _, ref in registry.manifests)
        again = first.ok("publish", "hello-plan", "--registry", f"{registry.address}/acme/plans")
        assert again["digest"] == result["digest"] and again["uploaded"] == 0


@needs_registry
def test_without_the_referrers_api_the_fallback_tag_lists_the_artifact(tmp_path: Path) -> None:
    from tests.launch import _image

    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    (tmp_path / "reg").mkdir()
    with _registry.running_registry(tmp_path / "reg") as address:
        digest = _image.push(address, "src/tool", "1", [(b"a layer", False)])
        source = hello_plan(tmp_path / "src")
        text = source.read_text().replace(
            "aileron:\n", f"aileron:\n  environment:\n    image: {address}/src/tool:1\n", 1
        )
        source.write_text(text)
        freeze(first, source, keys, "1.0.0")
        repo = f"{address}/acme/plans"
        result = first.ok("publish", "hello-plan", "--registry", repo)
        assert result["subject"] == digest and result["referrers"] == "fallback"
        index_type = "application/vnd.oci.image.index.v1+json"
        tag = "sha256-" + digest.removeprefix("sha256:")
        index = httpx.get(
            f"http://{address}/v2/acme/plans/manifests/{tag}", headers={"Accept": index_type}
        ).json()
        assert [m["digest"] for m in index["manifests"]] == [result["digest"]]
        assert index["manifests"][0]["artifactType"] == ARTIFACT
        # The image itself is in the artifact's repository, by digest.
        copied = httpx.head(
            f"http://{address}/v2/acme/plans/manifests/{digest}",
            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert copied.status_code == 200
        again = first.ok("publish", "hello-plan", "--registry", repo)
        assert again["digest"] == result["digest"]
        index2 = httpx.get(
            f"http://{address}/v2/acme/plans/manifests/{tag}", headers={"Accept": index_type}
        ).json()
        assert index2 == index


def test_an_image_whose_registry_serves_other_bytes_is_not_published(tmp_path: Path) -> None:
    from tests.launch import _image

    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    with _oci_server.serving() as registry:
        digest = _image.push(registry.address, "src/tool", "1", [(b"a layer", False)])
        source = hello_plan(tmp_path / "src")
        text = source.read_text().replace(
            "aileron:\n", f"aileron:\n  environment:\n    image: {registry.address}/src/tool:1\n", 1
        )
        source.write_text(text)
        freeze(first, source, keys, "1.0.0")
        body, media = registry.manifests[("src/tool", digest)]
        registry.manifests[("src/tool", digest)] = (body + b" ", media)
        first.refused(
            "publish.image_mismatch",
            "publish",
            "hello-plan",
            "--registry",
            f"{registry.address}/acme/plans",
        )
        assert not any(repo == "acme/plans" for repo, _ in registry.manifests)


def test_publish_refuses_a_registry_with_a_tag_and_an_unverified_plan(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    freeze(first, hello_plan(tmp_path / "src"), keys, "1.0.0")
    first.refused(
        "publish.invalid_registry", "publish", "hello-plan", "--registry", "localhost:1/a:tag"
    )
    first.refused("publish.invalid_registry", "publish", "hello-plan", "--registry", "acme/plans")
    sig = next(first.skills.rglob("SKILL.md"))
    sig.write_text(sig.read_text().replace("world", "WORLD"))
    first.refused(
        "verify.frontmatter_tampered", "publish", "hello-plan", "--registry", "localhost:1/a"
    )
