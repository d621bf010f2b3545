"""Issue 30: every refusal of `flightdeck install`, each with its code, and
nothing written to the store (nor the trust state) when refused.

A real artifact is published once to the tests' loopback registry
(`_oci_server`); each test then serves a hostile variant of it under
`latest` and installs it on a fresh machine that trusts the publisher.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.flightplan import _oci_server
from tests.flightplan._machines import Machine, freeze, hello_plan, publisher, trust

REPO = "acme/plans"


@dataclass
class Published:
    registry: _oci_server.Registry
    keys: Path
    manifests: dict[str, bytes]  # "1.0.0", "1.1.0", "other" -> manifest bytes

    @property
    def ref(self) -> str:
        return f"{self.registry.address}/{REPO}"

    def manifest(self, version: str = "1.0.0") -> dict[str, Any]:
        return dict(json.loads(self.manifests[version]))

    def serve(self, manifest: dict[str, Any] | bytes, tag: str = "latest") -> None:
        body = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
        self.registry.manifests[(REPO, tag)] = (body, "application/vnd.oci.image.manifest.v1+json")

    def blob(self, data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.registry.blobs[digest] = data
        return digest


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Published]:
    tmp = tmp_path_factory.mktemp("published")
    keys, other_keys = tmp / "keys", tmp / "other-keys"
    first = publisher(tmp / "a", keys)
    with _oci_server.serving() as registry:
        manifests = {}
        for version, text in (("1.0.0", "one"), ("1.1.0", "two")):
            freeze(first, hello_plan(tmp / version, text=text), keys, version)
            first.ok("publish", f"hello-plan@{version}", "--registry", f"{registry.address}/{REPO}")
            manifests[version] = registry.manifest(REPO, version)
        # The same name by another publisher, whose key the installer also trusts.
        other = Machine(tmp / "o")
        assert other.run("keys", "generate", "--out", str(other_keys)).returncode == 0
        source = hello_plan(tmp / "other", text="other")
        other.ok(
            "freeze", str(source), "--signing-key", str(other_keys / "flightdeck.key"),
            "--version", "2.0.0", "--publisher", "github://other",
        )  # fmt: skip
        other.run("keyring", "trust", "github://other", "--key", str(other_keys / "flightdeck.pub"))
        other.ok("publish", "hello-plan", "--registry", f"{registry.address}/other/plans")
        manifests["other"] = registry.manifest("other/plans", "latest")
        yield Published(registry, keys, manifests)


@pytest.fixture
def art(published: Published) -> Iterator[Published]:
    saved = dict(published.registry.manifests)
    published.serve(published.manifests["1.0.0"])
    yield published
    published.registry.manifests.clear()
    published.registry.manifests.update(saved)
    published.registry.overrides.clear()


@pytest.fixture
def machine(tmp_path: Path, published: Published) -> Machine:
    second = Machine(tmp_path / "b")
    trust(second, published.keys)
    return second


def refused(machine: Machine, code: str, ref: str) -> dict[str, Any]:
    """Refused with `code`, and nothing written to the store or trust state."""
    before = machine.stored(), machine.trust_state()
    error = machine.refused(code, "install", ref)
    assert (machine.stored(), machine.trust_state()) == before
    return error


def test_a_good_artifact_installs(art: Published, machine: Machine) -> None:
    installed = machine.ok("install", art.ref)
    assert installed["version"] == "1.0.0"
    # The unsigned index keeps the signing time, as a freeze's does.
    folder = Path(installed["path"])
    statement = json.loads((folder / "SKILL.md.sig").read_text())["statement"]
    assert json.loads((folder / "meta.json").read_text())["frozen_at"] == statement["signedAt"]


def test_a_digest_reference_is_refused(art: Published, machine: Machine) -> None:
    digest = "sha256:" + hashlib.sha256(art.manifests["1.0.0"]).hexdigest()
    refused(machine, "install.digest_ref", f"{art.ref}@{digest}")
    refused(machine, "install.invalid_ref", "acme/plans")


def test_another_artifact_type_is_refused(art: Published, machine: Machine) -> None:
    manifest = art.manifest()
    manifest["artifactType"] = "application/vnd.example.other+json"
    art.serve(manifest)
    refused(machine, "install.wrong_artifact_type", art.ref)
    image = art.manifest()
    del image["artifactType"]
    image["config"]["mediaType"] = "application/vnd.oci.image.config.v1+json"
    art.serve(image)
    error = refused(machine, "install.wrong_artifact_type", art.ref)
    assert "image.config" in error["message"]
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json"}
    art.serve(index)
    refused(machine, "install.wrong_artifact_type", art.ref)


@pytest.mark.parametrize("title", ["lock.json", "SKILL.md", "SKILL.md.sig", "signer.pub.pem"])
def test_a_missing_layer_is_refused(art: Published, machine: Machine, title: str) -> None:
    manifest = art.manifest()
    manifest["layers"] = [
        layer
        for layer in manifest["layers"]
        if layer["annotations"]["org.opencontainers.image.title"] != title
    ]
    art.serve(manifest)
    refused(machine, "install.layer_missing", art.ref)


def test_two_layers_of_a_kind_are_refused(art: Published, machine: Machine) -> None:
    manifest = art.manifest()
    manifest["layers"].append(manifest["layers"][0])
    art.serve(manifest)
    refused(machine, "install.bad_manifest", art.ref)


def test_an_oversized_layer_is_refused_before_it_is_fetched(
    art: Published, machine: Machine
) -> None:
    manifest = art.manifest()
    huge = b"x" * (100 << 20)  # a 100 MiB SKILL.md the registry would serve
    manifest["layers"][0] = {**manifest["layers"][0], "digest": art.blob(huge), "size": len(huge)}
    art.serve(manifest)
    art.registry.requests.clear()
    refused(machine, "install.layer_too_large", art.ref)
    assert not any("/blobs/" in request for request in art.registry.requests)
    del art.registry.blobs[manifest["layers"][0]["digest"]]


def test_a_changed_blob_is_refused(art: Published, machine: Machine) -> None:
    layer = art.manifest()["layers"][0]
    original = art.registry.blobs[layer["digest"]]
    path = f"/v2/{REPO}/blobs/{layer['digest']}"
    changed = bytearray(original)
    changed[10] ^= 1
    art.registry.override(path, _oci_server.Answer(200, bytes(changed)))
    refused(machine, "install.blob_mismatch", art.ref)
    art.registry.override(path, _oci_server.Answer(200, original + b"more"))
    refused(machine, "install.blob_mismatch", art.ref)


def test_content_changed_with_a_matching_manifest_fails_verify(
    art: Published, machine: Machine
) -> None:
    """A registry that rewrites the SKILL.md and the manifest's digest of it:
    the blob checks pass, the signature does not."""
    manifest = art.manifest()
    skill = art.registry.blobs[manifest["layers"][0]["digest"]]
    edited = skill.replace(b"default: one", b"default: evil")
    assert edited != skill
    manifest["layers"][0] = {
        **manifest["layers"][0],
        "digest": art.blob(edited),
        "size": len(edited),
    }
    art.serve(manifest)
    refused(machine, "verify.frontmatter_tampered", art.ref)


@pytest.mark.parametrize(
    "hostile",
    [
        b"not json",
        b"[]",
        b'{"schemaVersion": 2, "artifactType": "' + b"x" * (2 << 20) + b'"}',
        "deep",
        "layers-not-a-list",
        "size-a-string",
        "digest-not-sha256",
        "negative-size",
        "no-annotations",
        "bad-version-id",
        "too-many-layers",
        "misnamed-cosignature",
        "schema-version-1",
        "index-with-artifact-type",
        "layers-an-int",
        "two-code-pins",
        "no-name",
        "no-version-id",
        "layer-not-an-object",
        "digest-an-int",
    ],
)
def test_a_hostile_manifest_is_refused(
    art: Published, machine: Machine, hostile: bytes | str
) -> None:
    manifest = art.manifest()
    if hostile == "deep":  # json.dumps cannot write it: by hand
        deep = '{"a":' * 5000 + "{}" + "}" * 5000
        body = (json.dumps(manifest)[:-1] + f', "x": {deep}}}').encode()
    elif isinstance(hostile, bytes):
        body = hostile
    else:
        layer = manifest["layers"][0]
        change = {
            "layers-not-a-list": lambda: manifest.update(layers={"0": layer}),
            "size-a-string": lambda: layer.update(size=str(layer["size"])),
            "digest-not-sha256": lambda: layer.update(digest="md5:00"),
            "negative-size": lambda: layer.update(size=-1),
            "no-annotations": lambda: manifest.pop("annotations"),
            "bad-version-id": lambda: manifest["annotations"].update(
                {"ai.aileron.flightplan.version": "../../etc"}
            ),
            # Layers of a type install ignores: with the real ones, 65.
            "too-many-layers": lambda: manifest["layers"].extend(
                [{**layer, "mediaType": "application/x-other"}] * 61
            ),
            "schema-version-1": lambda: manifest.update(schemaVersion=1),
            "index-with-artifact-type": lambda: manifest.update(
                mediaType="application/vnd.oci.image.index.v1+json"
            ),
            "layers-an-int": lambda: manifest.update(layers=5),
            "two-code-pins": lambda: manifest["layers"].extend(
                [{**layer, "mediaType": "application/vnd.flightdeck.flightplan.code-pins.v1+json"}]
                * 2
            ),
            "no-name": lambda: manifest["annotations"].pop("ai.aileron.flightplan.name"),
            "no-version-id": lambda: manifest["annotations"].pop("ai.aileron.flightplan.version"),
            "layer-not-an-object": lambda: manifest["layers"].append("SKILL.md"),
            "digest-an-int": lambda: layer.update(digest=5),
            "misnamed-cosignature": lambda: manifest["layers"].append(
                {
                    **layer,
                    "mediaType": "application/vnd.flightdeck.flightplan.cosignature.v1+json",
                    "annotations": {"org.opencontainers.image.title": "../../SKILL.md"},
                }
            ),
        }[hostile]
        change()
        body = json.dumps(manifest).encode()
    art.serve(body)
    wrong_type = hostile in ("schema-version-1", "index-with-artifact-type")
    refused(
        machine, "install.wrong_artifact_type" if wrong_type else "install.bad_manifest", art.ref
    )


def test_a_redirect_elsewhere_is_refused(art: Published, machine: Machine) -> None:
    path = f"/v2/{REPO}/manifests/latest"
    art.registry.override(
        path, _oci_server.Answer(302, headers={"Location": "http://example.com/x"})
    )
    error = refused(machine, "install.registry_refused", art.ref)
    assert "redirect_refused" in error["message"]
    layer = art.manifest()["layers"][1]
    del art.registry.overrides[path]
    art.registry.override(
        f"/v2/{REPO}/blobs/{layer['digest']}",
        _oci_server.Answer(307, headers={"Location": "https://registry.example/blob"}),
    )
    refused(machine, "install.registry_refused", art.ref)


def test_annotations_that_do_not_describe_the_signed_content_are_refused(
    art: Published, machine: Machine
) -> None:
    for key, value in (
        ("ai.aileron.flightplan.name", "another-plan"),
        ("ai.aileron.flightplan.version", "0123456789abcdef"),
        ("dev.flightdeck.flightplan.label", "9.9.9"),
    ):
        manifest = art.manifest()
        manifest["annotations"][key] = value
        art.serve(manifest)
        error = refused(machine, "install.annotation_mismatch", art.ref)
        assert value in error["message"]


def test_an_aileron_artifact_is_named_and_refused(art: Published, machine: Machine) -> None:
    manifest = art.manifest()
    skill = manifest["layers"][0]
    aileron = "application/vnd.aileron.flightplan."
    lock, signature = b"lock: {}\n", b"s" * 64
    manifest["layers"] = [
        skill,
        {"mediaType": aileron + "lock.v1+yaml", "digest": art.blob(lock), "size": len(lock)},
        {"mediaType": aileron + "signature.v1", "digest": art.blob(signature), "size": 64},
        manifest["layers"][3],
    ]
    art.serve(manifest)
    error = refused(machine, "install.aileron_artifact", art.ref)
    assert "hello-plan" in error["message"] and "can be verified" in error["message"]


def test_an_untrusted_publisher_is_refused(art: Published, tmp_path: Path) -> None:
    stranger = Machine(tmp_path / "c")
    refused(stranger, "verify.publisher_untrusted", art.ref)


def test_an_older_version_under_latest_is_a_rollback(art: Published, machine: Machine) -> None:
    art.serve(art.manifests["1.1.0"])
    assert machine.ok("install", art.ref)["version"] == "1.1.0"
    art.serve(art.manifests["1.0.0"])
    refused(machine, "verify.rollback", art.ref)


def test_another_publisher_of_the_name_is_refused(
    art: Published, machine: Machine, published: Published, tmp_path: Path
) -> None:
    assert machine.ok("install", art.ref)["publisher"] == "github://acme"
    other_keys = Path(str(published.keys).replace("keys", "other-keys"))
    done = machine.run(
        "keyring", "trust", "github://other", "--key", str(other_keys / "flightdeck.pub")
    )
    assert done.returncode == 0, done.stderr
    art.serve(art.manifests["other"])
    refused(machine, "verify.publisher_changed", art.ref)


def test_registry_answers_without_an_artifact(art: Published, machine: Machine) -> None:
    refused(machine, "install.not_found", f"{art.ref}:no-such-tag")
    art.registry.override(
        f"/v2/{REPO}/manifests/latest",
        _oci_server.Answer(401, headers={"WWW-Authenticate": 'Basic realm="r"'}),
    )
    error = refused(machine, "install.unauthorized", art.ref)
    assert f"docker login {art.registry.address}" in error["message"]
    refused(machine, "install.unreachable", "127.0.0.1:9/acme/plans")


def test_a_manifest_copy_does_not_share_state(art: Published) -> None:
    # The fixtures hand each test its own manifest dict.
    first = art.manifest()
    first["layers"].clear()
    assert art.manifest()["layers"] and copy.deepcopy(first) == first


def test_co_signatures_travel_with_the_version(
    published: Published, tmp_path: Path, art: Published
) -> None:
    """A version co-signed by a second key: its co-signature is a layer
    named by its title, and lands beside the version under that name."""
    tmp = tmp_path / "co"
    keys = tmp / "keys"
    first = publisher(tmp / "a", keys)
    freeze(first, hello_plan(tmp / "src", text="cosigned"), keys, "3.0.0")
    assert first.run("keys", "generate", "--out", str(tmp / "second")).returncode == 0
    signed = first.run(
        "sign", "hello-plan@3.0.0", "--signing-key", str(tmp / "second" / "flightdeck.key")
    )
    assert signed.returncode == 0, signed.stderr
    first.ok("publish", "hello-plan@3.0.0", "--registry", f"{art.registry.address}/co/plans")
    second = Machine(tmp / "b")
    trust(second, keys)
    installed = second.ok("install", f"{art.registry.address}/co/plans")
    names = sorted(p.name for p in Path(installed["path"]).iterdir())
    cosignatures = [n for n in names if n.startswith("SKILL.md.") and n != "SKILL.md.sig"]
    assert len(cosignatures) == 1 and cosignatures[0].endswith(".sig"), names
