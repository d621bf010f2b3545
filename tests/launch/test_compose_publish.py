"""Issue 32, done-when: a tools-only plan frozen to one composed image on one
machine is launched inside that image on a machine that has never seen the
tools, sharing nothing with the first but the registry the plan went to.

Machine A freezes the plan with a catalog (base and Features in a source
registry), launches it and publishes it: the composed image is copied from
A's image cache (an OCI layout) into the plan's repository. The source
registry is stopped; machine B (a fresh home, no catalog) installs the plan
and launches it: the composed image is pulled from the plan's repository by
the digest the signed lock pins, and the outputs are A's. A cache whose
layout was tampered with is refused before anything is pushed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flightdeck.launch import bwrap_path
from tests.flightplan import _registry
from tests.flightplan._machines import PUBLISHER, Machine, publisher, trust

from . import _features, _image
from .test_compose import _plan

pytestmark = [
    pytest.mark.skipif(bwrap_path() is None, reason="needs bubblewrap: apt-get install bubblewrap"),
    pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT),
    pytest.mark.skipif(not _image.busybox_available(), reason=_image.INSTALL_HINT),
]


def _catalog(source: str, folder: Path) -> Path:
    base = _image.push(source, "flightdeck/runner", "1", _features.runner_layers())
    hello = _features.push_feature(source, "features/hello", "1", _features.hello_feature())
    greet = _features.push_feature(source, "features/greet", "1", _features.greet_feature())
    return _features.write_catalog(
        folder / "catalog.json",
        f"{source}/flightdeck/runner:1@{base}",
        {
            "hello": ("1.2.0", f"{source}/features/hello:1@{hello}", {}),
            "greet": ("2.0.1", f"{source}/features/greet:1@{greet}", {"greeting": "howdy"}),
        },
    )


def _freeze(machine: Machine, plan: Path, keys: Path, catalog: Path) -> dict[str, object]:
    return machine.ok(
        "freeze",
        str(plan),
        "--signing-key",
        str(keys / "flightdeck.key"),
        "--version",
        "1.0.0",
        "--publisher",
        PUBLISHER,
        "--catalog",
        str(catalog),
    )


def test_a_composed_plan_is_published_installed_and_launched_elsewhere(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    second = Machine(tmp_path / "b")
    trust(second, keys)
    host_only = tmp_path / "host-only.txt"
    host_only.write_text("the host's\n")
    for name in ("source", "target"):
        (tmp_path / name).mkdir()
    with _registry.running_registry(tmp_path / "target") as target:
        with _registry.running_registry(tmp_path / "source") as source:
            catalog = _catalog(source, tmp_path)
            plan = _plan(tmp_path / "workspace", ["hello@1", "greet@2"], host_only)
            _freeze(first, plan, keys, catalog)
            [stored] = first.skills.rglob("lock.json")
            lock = json.loads(stored.read_text())
            digest = lock["resolvedImages"][0]["digest"]
            out_a = tmp_path / "out-a"
            done = first.run("launch", "composed-plan@1.0.0", "--out-dir", str(out_a))
            assert done.returncode == 0, done.stderr
            published = first.ok("publish", "composed-plan", "--registry", f"{target}/acme/plans")
            assert published["subject"] == digest
        # The source registry (base and Features) is gone, and the catalog.
        catalog.unlink()
        installed = second.ok("install", f"{target}/acme/plans:1.0.0")
        assert installed["origin"]["registry"] == target
        dry = second.run("launch", "composed-plan@1.0.0", "--dry-run")
        assert f"{target}/acme/plans@{digest}" in dry.stdout, dry.stdout
        assert "hello" in dry.stdout and "greet" in dry.stdout
        out_b = tmp_path / "out-b"
        done = second.run("launch", "composed-plan@1.0.0", "--out-dir", str(out_b))
        assert done.returncode == 0, done.stderr
        assert (second.home / "data" / "images" / "sha256" / digest[7:] / "oci-layout").is_file()
        # Published again from B (its cache now holds the pulled image): the same digest.
        again = second.ok("publish", "composed-plan", "--registry", f"{target}/acme/copy")
        assert again["subject"] == digest
    report = (out_b / "report.txt").read_text()
    assert report == (out_a / "report.txt").read_text()
    assert report.splitlines()[:2] == ["greet 2.0.1 says howdy", "hello 1.2.0"]
    assert f"{host_only} absent" in report


def test_publish_refuses_a_composed_image_it_cannot_find_or_trust(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    for name in ("source", "target"):
        (tmp_path / name).mkdir()
    with _registry.running_registry(tmp_path / "target") as target:
        with _registry.running_registry(tmp_path / "source") as source:
            catalog = _catalog(source, tmp_path)
            plan = _plan(tmp_path / "workspace", ["hello@1", "greet@2"], tmp_path)
            _freeze(first, plan, keys, catalog)
        images = first.home / "data" / "images" / "sha256"
        [folder] = [
            p
            for p in images.iterdir()
            if (p / "ready.json").is_file() and "composed" in (p / "ready.json").read_text()
        ]
        manifest = json.loads((folder / "manifest.json").read_text())
        layer = folder / "blobs" / "sha256" / manifest["layers"][-1]["digest"][7:]
        # A link in the layout's place is not followed: the cache is corrupt.
        saved = layer.read_bytes()
        layer.unlink()
        os.symlink("/etc/passwd", layer)
        error = first.refused(
            "publish.image_not_local", "publish", "composed-plan", "--registry", f"{target}/a/p"
        )
        assert "no longer matches" in error["message"]
        layer.unlink()
        layer.write_bytes(saved)
        # The whole image gone from the cache: refused, naming where to publish from.
        assert len(first.json("images", "prune")["removed"]) == 2
        error = first.refused(
            "publish.image_not_local", "publish", "composed-plan", "--registry", f"{target}/a/p"
        )
        assert "freeze" in error["hint"]


def test_an_exported_composed_plan_is_imported_and_launched_with_no_registry(
    tmp_path: Path,
) -> None:
    """Air-gapped: the export tar carries the composed image; import stores
    it in the image cache (every byte checked), and launch needs no registry.
    A tar whose image layer was changed is refused: install.image_invalid."""
    import tarfile

    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    (tmp_path / "source").mkdir()
    with _registry.running_registry(tmp_path / "source") as source:
        catalog = _catalog(source, tmp_path)
        plan = _plan(tmp_path / "workspace", ["hello@1", "greet@2"], tmp_path)
        _freeze(first, plan, keys, catalog)
    archive = tmp_path / "plan.tar"
    exported = first.ok("skills", "export", "composed-plan@1.0.0", "--output", str(archive))
    digest = str(exported["subject"])

    third = Machine(tmp_path / "c")
    trust(third, keys)
    imported = third.ok("skills", "import", str(archive))
    assert imported["image"] == f"flightdeck.local/composed@{digest}"
    out = tmp_path / "out-c"
    done = third.run("launch", "composed-plan@1.0.0", "--out-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "report.txt").read_text().startswith("greet 2.0.1 says howdy\nhello 1.2.0\n")

    # One byte of the top layer changed inside the tar, on a fresh machine.
    with tarfile.open(archive) as tar:
        index = json.loads(tar.extractfile("index.json").read())  # type: ignore[union-attr]
        names = {m.name: m for m in tar.getmembers()}
        manifest = json.loads(
            tar.extractfile(names[f"blobs/sha256/{digest[7:]}"]).read()  # type: ignore[union-attr]
        )
        member = names["blobs/sha256/" + manifest["layers"][-1]["digest"][7:]]
    assert index["manifests"]
    raw = bytearray(archive.read_bytes())
    raw[member.offset_data + 700] ^= 0x01
    archive.write_bytes(bytes(raw))
    fourth = Machine(tmp_path / "d")
    trust(fourth, keys)
    error = fourth.refused("install.image_invalid", "skills", "import", str(archive))
    assert "composed image" in error["message"]
    assert not list((fourth.home / "data" / "images" / "sha256").glob("[0-9a-f]*/ready.json"))
