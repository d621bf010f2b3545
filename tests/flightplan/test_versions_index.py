"""Issue 30, item 6: the signed versions index stops a rollback (and a
withheld version, once the index expires) on a machine that has never
installed the name, where the trust state has nothing to compare with."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flightdeck.flightplan import load_private_key
from flightdeck.flightplan.publish._index import VersionsIndex, signed
from tests.flightplan import _oci_server
from tests.flightplan._machines import PUBLISHER, Machine, freeze, hello_plan, publisher, trust

REPO = "acme/plans"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"


@dataclass
class Setup:
    registry: _oci_server.Registry
    first: Machine
    keys: Path
    tmp: Path
    artifacts: dict[str, bytes]  # version -> artifact manifest
    indexes: dict[str, bytes]  # version -> the index manifest after its publish

    @property
    def ref(self) -> str:
        return f"{self.registry.address}/{REPO}"

    def serve(self, tag: str, body: bytes) -> None:
        self.registry.manifests[(REPO, tag)] = (body, MANIFEST)

    def machine(self, name: str) -> Machine:
        fresh = Machine(self.tmp / name)
        trust(fresh, self.keys)
        return fresh

    def publish(self, version: str, *extra: str) -> dict[str, object]:
        return self.first.ok(
            "publish", f"hello-plan@{version}", "--registry", self.ref,
            "--signing-key", str(self.keys / "flightdeck.key"), *extra,
        )  # fmt: skip


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    with _oci_server.serving() as registry:
        found = Setup(registry, first, keys, tmp_path, {}, {})
        for version, text in (("1.0.0", "one"), ("1.1.0", "two")):
            freeze(first, hello_plan(tmp_path / version, text=text), keys, version)
            result = found.publish(version)
            assert result["index"] == (1 if version == "1.0.0" else 2)
            found.artifacts[version] = registry.manifest(REPO, "latest")
            found.indexes[version] = registry.manifest(REPO, "index")
        yield found


def test_latest_installs_when_the_index_names_it(setup: Setup) -> None:
    fresh = setup.machine("b")
    assert fresh.ok("install", setup.ref)["version"] == "1.1.0"
    state = json.loads((fresh.home / "data" / "index-state.json").read_text())
    assert state == {"hello-plan": 2}
    # Re-publishing the newest version changes nothing in the index.
    assert setup.publish("1.1.0")["index"] == 2
    assert setup.registry.manifest(REPO, "index") == setup.indexes["1.1.0"]


def test_an_older_artifact_under_latest_is_refused_on_a_fresh_machine(setup: Setup) -> None:
    setup.serve("latest", setup.artifacts["1.0.0"])
    fresh = setup.machine("b")
    error = fresh.refused("install.index_mismatch", "install", setup.ref)
    assert "not the newest" in error["message"]
    assert fresh.stored() == [] and not (fresh.home / "data" / "index-state.json").exists()
    # Asked for by its label, the older version is the user's choice.
    assert fresh.ok("install", f"{setup.ref}:1.0.0")["version"] == "1.0.0"


def test_an_older_index_is_a_rollback_where_a_newer_was_seen(setup: Setup) -> None:
    fresh = setup.machine("b")
    fresh.ok("install", setup.ref)
    before = fresh.stored()
    setup.serve("latest", setup.artifacts["1.0.0"])
    setup.serve("index", setup.indexes["1.0.0"])
    fresh.refused("install.index_rollback", "install", setup.ref)
    assert fresh.stored() == before


def _serve_index(setup: Setup, index: VersionsIndex, key_path: Path) -> None:
    body, envelope = signed(index, load_private_key(key_path))
    layers = []
    for media, raw in (
        ("application/vnd.flightdeck.flightplan.index-file.v1+json", body),
        ("application/vnd.flightdeck.flightplan.index-signature.v1+json", envelope),
    ):
        digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        setup.registry.blobs[digest] = raw
        layers.append({"mediaType": media, "digest": digest, "size": len(raw)})
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "artifactType": "application/vnd.flightdeck.flightplan.index.v1+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": "x", "size": 2},
        "layers": layers,
    }
    setup.serve("index", json.dumps(manifest).encode())


def _current(setup: Setup, **changes: object) -> VersionsIndex:
    data = json.loads(setup.registry.blobs[_layer_digest(setup, 0)])
    index = VersionsIndex(
        data["name"], data["publisher"], data["sequence"], data["expires"],
        tuple(data["versions"]),
    )  # fmt: skip
    return VersionsIndex(**{**index.__dict__, **changes})  # type: ignore[arg-type]


def _layer_digest(setup: Setup, n: int) -> str:
    return str(json.loads(setup.registry.manifest(REPO, "index"))["layers"][n]["digest"])


def test_an_expired_index_is_refused(setup: Setup) -> None:
    _serve_index(
        setup, _current(setup, expires=int(time.time()) - 60), setup.keys / "flightdeck.key"
    )
    fresh = setup.machine("b")
    fresh.refused("install.index_expired", "install", setup.ref)
    assert fresh.stored() == []


def test_an_index_signed_by_another_key_is_refused(setup: Setup) -> None:
    other = setup.tmp / "other"
    assert setup.first.run("keys", "generate", "--out", str(other)).returncode == 0
    _serve_index(setup, _current(setup, sequence=99), other / "flightdeck.key")
    fresh = setup.machine("b")
    fresh.refused("install.index_untrusted", "install", setup.ref)
    assert fresh.stored() == []
    # Nor does the publisher's own publish sign on top of it.
    error = setup.first.refused(
        "publish.index_invalid",
        "publish", "hello-plan@1.1.0", "--registry", setup.ref,
        "--signing-key", str(setup.keys / "flightdeck.key"),
    )  # fmt: skip
    assert "not signed by this key" in error["message"]


def test_an_index_of_another_name_or_malformed_is_refused(setup: Setup) -> None:
    _serve_index(setup, _current(setup, name="another-plan"), setup.keys / "flightdeck.key")
    fresh = setup.machine("b")
    fresh.refused("install.index_mismatch", "install", setup.ref)
    setup.registry.blobs[_layer_digest(setup, 0)] = b"{}"  # its digest no longer matches
    fresh.refused("install.blob_mismatch", "install", setup.ref)
    assert fresh.stored() == []
    assert PUBLISHER.startswith("github://")


def _serve_raw(
    setup: Setup,
    body: bytes,
    envelope: bytes,
    *,
    artifact_type: str = "application/vnd.flightdeck.flightplan.index.v1+json",
    size: object = None,
) -> None:
    layers = []
    for media, raw in (
        ("application/vnd.flightdeck.flightplan.index-file.v1+json", body),
        ("application/vnd.flightdeck.flightplan.index-signature.v1+json", envelope),
    ):
        digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        setup.registry.blobs[digest] = raw
        layers.append({"mediaType": media, "digest": digest, "size": len(raw)})
    if size is not None:
        layers[0]["size"] = size
    manifest = {"schemaVersion": 2, "artifactType": artifact_type, "layers": layers}
    setup.serve("index", json.dumps(manifest).encode())


def _signed_bytes(setup: Setup, index: VersionsIndex) -> tuple[bytes, bytes]:
    return signed(index, load_private_key(setup.keys / "flightdeck.key"))


@pytest.mark.parametrize(
    "hostile",
    [
        "envelope-a-list",
        "envelope-without-key-id",
        "signature-of-other-bytes",
        "another-artifact-type",
        "size-over-the-bound",
        "size-a-string",
        "entry-a-string",
        "sequence-a-bool",
        "sequence-a-string",
    ],
)
def test_a_malformed_or_forged_index_is_untrusted(setup: Setup, hostile: str) -> None:
    body, envelope = _signed_bytes(setup, _current(setup))
    options: dict[str, object] = {}
    data = json.loads(body)
    if hostile == "envelope-a-list":
        envelope = b"[]"
    elif hostile == "envelope-without-key-id":
        envelope = json.dumps({"signature": json.loads(envelope)["signature"]}).encode()
    elif hostile == "signature-of-other-bytes":
        _, other = _signed_bytes(setup, _current(setup, sequence=77))
        envelope = other
    elif hostile == "another-artifact-type":
        options["artifact_type"] = "application/vnd.example+json"
    elif hostile == "size-over-the-bound":
        options["size"] = (1 << 20) + 1
    elif hostile == "size-a-string":
        options["size"] = "12"
    elif hostile == "entry-a-string":
        data["versions"].append("1.2.0")
    elif hostile == "sequence-a-bool":
        data["sequence"] = True
    elif hostile == "sequence-a-string":
        data["sequence"] = "3"
    if hostile.startswith(("entry", "sequence")):
        body = json.dumps(data).encode()
        envelope = json.dumps(
            {
                "keyId": json.loads(envelope)["keyId"],
                "signature": __import__("base64")
                .b64encode(load_private_key(setup.keys / "flightdeck.key").sign(body))
                .decode(),
            }
        ).encode()
    _serve_raw(setup, body, envelope, **options)  # type: ignore[arg-type]
    fresh = setup.machine("b")
    fresh.refused("install.index_untrusted", "install", setup.ref)
    assert fresh.stored() == []


def test_an_index_signed_by_a_revoked_key_is_untrusted(setup: Setup) -> None:
    fresh = setup.machine("b")
    done = fresh.run("keyring", "revoke", str(setup.keys / "flightdeck.pub"))
    assert done.returncode == 0, done.stderr
    fresh.refused("install.index_untrusted", "install", setup.ref)
    assert fresh.stored() == []


@pytest.mark.parametrize("case", ["empty", "other-id-same-digest", "not-listed"])
def test_the_artifact_must_be_the_newest_entry(setup: Setup, case: str) -> None:
    newest = dict(_current(setup).versions[-1])
    versions: tuple[dict[str, object], ...] = ()
    if case == "other-id-same-digest":
        versions = ({**newest, "id": "0" * 16},)
    elif case == "not-listed":
        versions = ({"id": "1" * 16, "version": "0.9.0", "digest": "sha256:" + "2" * 64},)
    _serve_index(setup, _current(setup, versions=versions), setup.keys / "flightdeck.key")
    fresh = setup.machine("b")
    error = fresh.refused("install.index_mismatch", "install", setup.ref)
    if case == "not-listed":
        assert "not listed" in error["message"]
    assert fresh.stored() == []
