"""Issue 32: `flightdeck catalog add TOOL VERSION ./folder --push HOST/REPO`.

A Feature folder is packed reproducibly (the same folder gives the same
tarball whatever its times, owners or the machine), pushed to the registry
and pinned by digest in the catalog. The folder may be someone else's and
what is packed leaves the machine: links, fifos, a missing install.sh, bad
metadata, an oversized or over-deep tree are refused, located at the entry.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from flightdeck.flightplan import FlightPlanError, load_feature_catalog
from flightdeck.launch import bwrap_path
from flightdeck.launch.compose import _feature_pack
from flightdeck.launch.compose._feature_pack import pack_feature
from tests.cli._run import run
from tests.flightplan import _registry

from . import _features, _image


def _folder(root: Path) -> Path:
    folder = root / "hello"
    (folder / "lib").mkdir(parents=True)
    metadata = {"id": "hello", "version": "1.2.0", "options": {"greeting": {"type": "string"}}}
    (folder / "devcontainer-feature.json").write_text(json.dumps(metadata))
    (folder / "install.sh").write_text(
        "#!/bin/sh\nset -e\nmkdir -p /usr/local/bin\ncp hello.sh /usr/local/bin/hello\n"
    )
    (folder / "install.sh").chmod(0o755)
    (folder / "hello.sh").write_text(_features.HELLO)
    (folder / "lib" / "data.txt").write_text("bundled\n")
    return folder


def test_the_same_folder_packs_to_the_same_bytes(tmp_path: Path) -> None:
    first = pack_feature(_folder(tmp_path / "a"))
    other = _folder(tmp_path / "b")
    for path in other.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
    (other / "hello.sh").chmod(0o600)  # no exec bit: 0644 either way
    os.chown(other / "hello.sh", 1234, 1234)
    again = pack_feature(other)
    assert again.tarball == first.tarball
    assert (first.feature_id, first.options) == ("hello", ("greeting",))
    (other / "lib" / "data.txt").write_text("changed\n")
    assert pack_feature(other).tarball != first.tarball


@pytest.mark.parametrize(
    ("attack", "located"),
    [
        ("link", "lib/key"),
        ("dir-link", "lib/home"),
        ("fifo", "lib/pipe"),
        ("no-install", "install.sh"),
        ("install-dir", "install.sh"),
        ("bad-json", "devcontainer-feature.json"),
        ("bad-id", "devcontainer-feature.json"),
        ("bad-options", "devcontainer-feature.json"),
        ("too-large", "lib/big.bin"),
        ("too-deep", "lib/d/e/f"),
        ("root-link", ""),
    ],
)
def test_a_bad_folder_is_refused_where_it_is_bad(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str, located: str
) -> None:
    folder = _folder(tmp_path)
    lib = folder / "lib"
    meta = folder / "devcontainer-feature.json"
    target = folder
    if attack == "link":
        secret = tmp_path / "id_ed25519"
        secret.write_text("PRIVATE KEY\n")
        (lib / "key").symlink_to(secret)
    elif attack == "dir-link":
        (lib / "home").symlink_to(tmp_path)
    elif attack == "fifo":
        os.mkfifo(lib / "pipe")
    elif attack == "no-install":
        (folder / "install.sh").unlink()
    elif attack == "install-dir":
        (folder / "install.sh").unlink()
        (folder / "install.sh").mkdir()
    elif attack == "bad-json":
        meta.write_text("{")
    elif attack == "bad-id":
        meta.write_text(json.dumps({"id": "../Hello"}))
    elif attack == "bad-options":
        meta.write_text(json.dumps({"id": "hello", "options": {"x": 1}}))
    elif attack == "too-large":
        monkeypatch.setattr(_feature_pack, "FOLDER_LIMIT", 4096)
        (lib / "big.bin").write_bytes(b"x" * 8192)
    elif attack == "too-deep":
        monkeypatch.setattr(_feature_pack, "MAX_DEPTH", 3)
        (lib / "d" / "e" / "f").mkdir(parents=True)
    else:
        target = tmp_path / "link-to-folder"
        target.symlink_to(folder)
    with pytest.raises(FlightPlanError) as caught:
        pack_feature(target)
    assert caught.value.code == "catalog.bad_feature_folder"
    where = str(caught.value.where)
    assert where == (str(target / located) if located else str(target)), caught.value.message


@pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT)
def test_a_folder_is_pushed_and_pinned_by_digest(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    catalog = tmp_path / "catalog.json"
    (tmp_path / "registry").mkdir()
    with _registry.running_registry(tmp_path / "registry") as address:

        def add(source: str, *extra: str) -> dict[str, object]:
            done = run(
                "catalog", "add", "hello", "1.2.0", source, "--catalog", str(catalog),
                "--option", "greeting=hey", "--format", "json", *extra,
            )  # fmt: skip
            data = json.loads(done.stdout)
            assert isinstance(data, dict)
            return data

        added = add(str(folder), "--push", f"{address}/features/hello")
        assert added["ok"] is True, added
        feature = str(added["feature"])
        assert feature.startswith(f"{address}/features/hello:1.2.0@sha256:")
        assert load_feature_catalog(catalog).tools["hello"]["1.2.0"].feature == feature
        # The same folder elsewhere: the same digest, so the catalog takes it again.
        copy = tmp_path / "copy"
        shutil.copytree(folder, copy)
        assert add(str(copy), "--push", f"{address}/features/hello")["feature"] == feature
        # Refusals: no --push; an option the Feature does not declare.
        assert add(str(folder))["error"]["code"] == "catalog.push_required"  # type: ignore[index]
        refused = add(str(folder), "--push", f"{address}/features/hello:2", "--option", "nope=1")
        assert refused["error"]["code"] == "compose.bad_option"  # type: ignore[index]


@pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT)
@pytest.mark.skipif(not _image.busybox_available(), reason=_image.INSTALL_HINT)
@pytest.mark.skipif(bwrap_path() is None, reason="needs bubblewrap: apt-get install bubblewrap")
def test_features_added_from_folders_compose_at_freeze(tmp_path: Path, fd_home: Path) -> None:
    """The folder route ends where the registry route does: freeze composes
    the pushed Features onto the runner base the catalog names."""
    from flightdeck.launch.image._cache import ImageCache

    from .test_compose import _freeze, _plan

    hello = _folder(tmp_path / "src")
    greet = tmp_path / "src" / "greet"
    greet.mkdir()
    metadata = {"id": "greet", "options": {"greeting": {"type": "string", "default": "hi"}}}
    (greet / "devcontainer-feature.json").write_text(json.dumps(metadata))
    (greet / "install.sh").write_text(_features.GREET_INSTALL)
    (greet / "greet.sh").write_text(_features.GREET)
    catalog = tmp_path / "catalog.json"
    (tmp_path / "registry").mkdir()
    with _registry.running_registry(tmp_path / "registry") as address:
        _image.push(address, "flightdeck/runner", "1", _features.runner_layers())
        for tool, version, folder, extra in (
            ("hello", "1.2.0", hello, ["--runner-base", f"{address}/flightdeck/runner:1"]),
            ("greet", "2.0.1", greet, ["--option", "greeting=howdy"]),
        ):
            done = run(
                "catalog", "add", tool, version, str(folder), "--push",
                f"{address}/features/{tool}", "--catalog", str(catalog), *extra,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
        plan = _plan(tmp_path / "plan", ["hello@1", "greet@2"], tmp_path)
        lock = _freeze(plan, catalog, tmp_path / "keys").frozen.lock
    [image] = lock["resolvedImages"]
    assert [f["tool"] for f in image["features"]] == ["greet", "hello"]
    rootfs = ImageCache().folder(f"flightdeck.local/composed@{image['digest']}") / "rootfs"
    assert (rootfs / "usr/local/share/greet/greeting").read_text() == "howdy\n"
    assert (rootfs / "usr/local/bin/hello").read_text() == _features.HELLO
