"""Issue 32's pieces without a registry or a sandbox: the layer a tree's
changes make, Feature metadata and options, the composed config."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from flightdeck.flightplan import FeaturePin
from flightdeck.launch import LaunchError
from flightdeck.launch.compose._feature import _read_metadata, option_variable
from flightdeck.launch.compose._install import install_argv
from flightdeck.launch.image._layer import Changes, check, diff, snapshot, write_layer
from flightdeck.launch.image._oci import NewLayer, composed_config
from flightdeck.launch.image._rootfs import Refused
from flightdeck.launch.image._unpack import unpack


def _tree(root: Path) -> Path:
    (root / "usr/local/bin").mkdir(parents=True)
    (root / "etc/old").mkdir(parents=True)
    (root / "etc/old/a").write_text("a")
    (root / "etc/keep").write_text("k")
    (root / "etc/gone").write_text("g")
    (root / "tmp").mkdir()
    os.symlink("local/bin", root / "usr/links")
    return root


def _members(layer: Path) -> list[tuple[str, float, int, int, str]]:
    with tarfile.open(layer) as tar:
        return [(m.name, m.mtime, m.uid, m.mode, m.uname) for m in tar.getmembers()]


def test_changes_become_one_normalised_layer(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root")
    before = snapshot(root)
    (root / "usr/local/bin/tool").write_text("#!/bin/sh\n")
    (root / "usr/local/bin/tool").chmod(0o755)
    (root / "etc/keep").chmod(0o600)  # a mode change alone is a change
    (root / "etc/gone").unlink()
    for name in ("a",):
        (root / "etc/old" / name).unlink()
    (root / "etc/old").rmdir()
    (root / "tmp/scratch").write_text("ignored")
    os.symlink("/usr/local/bin/tool", root / "usr/local/bin/t")
    after = snapshot(root)
    changes = diff(before, after, ("tmp",))
    assert changes.removed == ("etc/gone", "etc/old")  # the topmost of a removed tree
    assert "usr/local/bin/tool" in changes.written and "etc/keep" in changes.written
    assert not any(p.startswith("tmp") for p in changes.written)
    check(after, changes)
    digest, size = write_layer(root, changes, tmp_path / "layer.tar")
    assert size == (tmp_path / "layer.tar").stat().st_size
    members = _members(tmp_path / "layer.tar")
    assert {m[1:3] for m in members} == {(0, 0)} and {m[4] for m in members} == {""}
    names = [m[0] for m in members]
    assert names[-2:] == ["etc/.wh.gone", "etc/.wh.old"]
    assert ("usr/local/bin/tool", 0, 0, 0o755, "") in members
    # The same changes elsewhere (other times, other inodes): the same bytes.
    again = _tree(tmp_path / "again")
    first = snapshot(again)
    (again / "etc/old/a").unlink()
    (again / "etc/old").rmdir()
    (again / "etc/gone").unlink()
    (again / "etc/keep").chmod(0o600)
    (again / "usr/local/bin/tool").write_text("#!/bin/sh\n")
    (again / "usr/local/bin/tool").chmod(0o755)
    os.symlink("/usr/local/bin/tool", again / "usr/local/bin/t")
    second = diff(first, snapshot(again), ("tmp",))
    assert write_layer(again, second, tmp_path / "again.tar")[0] == digest
    # Applied by the unpacker onto the base, it gives the changed tree.
    base = _tree(tmp_path / "base")
    unpack([(tmp_path / "layer.tar", "")], base)
    assert not (base / "etc/gone").exists() and not (base / "etc/old").exists()
    assert (base / "usr/local/bin/tool").read_text() == "#!/bin/sh\n"


def test_a_folder_replaced_by_a_file_needs_no_whiteouts_below(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root")
    before = snapshot(root)
    (root / "etc/old/a").unlink()
    (root / "etc/old").rmdir()
    (root / "etc/old").write_text("now a file")
    changes = diff(before, snapshot(root))
    assert changes.removed == () and "etc/old" in changes.written
    assert diff(before, before) == Changes(frozenset(), ())


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_what_no_layer_may_carry_is_refused(tmp_path: Path, kind: str) -> None:
    root = _tree(tmp_path / "root")
    before = snapshot(root)
    if kind == "fifo":
        os.mkfifo(root / "usr/local/bin/pipe")
    else:
        os.symlink("../../../../etc/shadow", root / "usr/local/bin/evil")
    after = snapshot(root)
    with pytest.raises(Refused) as caught:
        check(after, diff(before, after))
    assert caught.value.code == "unsafe_change"
    # A relative link that stays inside, and an absolute one, are fine.
    os.unlink(root / "usr/local/bin" / ("pipe" if kind == "fifo" else "evil"))
    os.symlink("../../../etc/keep", root / "usr/local/bin/fine")
    os.symlink("/etc/shadow", root / "usr/local/bin/absolute")
    after = snapshot(root)
    check(after, diff(before, after))


def test_option_names_follow_the_features_spec() -> None:
    assert option_variable("greeting") == "GREETING"
    assert option_variable("install-tools") == "INSTALL_TOOLS"
    assert option_variable("9lives.x") == "_LIVES_X"
    assert option_variable("__a") == "_A"


def _feature(folder: Path, metadata: object, install: bool | str = True) -> Path:
    folder.mkdir()
    (folder / "devcontainer-feature.json").write_text(json.dumps(metadata))
    if install == "dir":
        (folder / "install.sh").mkdir()
    elif install:
        (folder / "install.sh").write_text("#!/bin/sh\n")
    return folder


PIN = FeaturePin("greet", "2", "2.0.1", "r/g@sha256:" + "a" * 64, {"greeting": "yo"}, ("greet",))


def test_options_and_container_env_from_the_metadata(tmp_path: Path) -> None:
    meta = {
        "id": "greet",
        "options": {
            "greeting": {"type": "string", "default": "hi"},
            "loud": {"type": "boolean", "default": False},
            "colour": {"type": "string"},
        },
        "containerEnv": {"GREET_HOME": "/usr/local/share/greet"},
    }
    env, container, _ = _read_metadata(_feature(tmp_path / "f", meta), PIN)
    assert env == {"GREETING": "yo", "LOUD": "false"}
    assert container == {"GREET_HOME": "/usr/local/share/greet"}


@pytest.mark.parametrize(
    ("metadata", "install", "code"),
    [
        ({"options": {}}, False, "compose.bad_feature"),
        ({"options": {}}, "dir", "compose.bad_feature"),
        ([], True, "compose.bad_feature"),
        ({"options": []}, True, "compose.bad_feature"),
        ({"options": {"other": {}}}, True, "compose.bad_option"),
        ({"options": {"greeting": {}}, "containerEnv": {"A": 1}}, True, "compose.bad_feature"),
    ],
)
def test_malformed_features_are_refused(
    tmp_path: Path, metadata: object, install: bool | str, code: str
) -> None:
    with pytest.raises(LaunchError) as caught:
        _read_metadata(_feature(tmp_path / "f", metadata, install), PIN)
    assert caught.value.code == code


def test_install_runs_as_root_without_privilege(tmp_path: Path) -> None:
    feature = _feature(tmp_path / "f", {})
    argv = install_argv("bwrap", tmp_path / "root", feature, {"GREETING": "yo"})
    assert "--cap-drop" in argv and "--share-net" not in argv and "--unshare-all" in argv
    if "--unshare-user" in argv:
        assert argv[argv.index("--uid") + 1] == "0" and "65534" not in argv
    assert argv[argv.index("--bind") + 1 : argv.index("--bind") + 3] == [
        str(tmp_path / "root"),
        "/",
    ]
    assert argv[-2:] == ["/bin/sh", "./install.sh"]  # not executable: run by the shell
    (feature / "install.sh").chmod(0o755)
    assert install_argv("bwrap", tmp_path, feature, {})[-1] == "./install.sh"


def test_the_composed_config_keeps_the_base_and_adds_the_layers() -> None:
    base = {
        "architecture": "amd64",
        "config": {"Env": ["PATH=/bin", "GREET_HOME=/old"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "1" * 64]},
        "history": [{"created_by": "base"}],
    }
    layer = NewLayer("sha256:" + "2" * 64, 10, "flightdeck compose: greet@2.0.1")
    out = json.loads(
        composed_config(json.dumps(base).encode(), 1, [layer], {"GREET_HOME": "/new"}, "b")
    )
    assert out["rootfs"]["diff_ids"] == ["sha256:" + "1" * 64, "sha256:" + "2" * 64]
    assert out["config"]["Env"] == ["PATH=/bin", "GREET_HOME=/new"]
    assert out["history"][-1] == {"created": "1970-01-01T00:00:00Z", "created_by": layer.created_by}
    # Not JSON, not an object, or diff ids that do not match the base's
    # layers (the composed image's ids would name the wrong layers).
    for bad, count in ((b"[]", 0), (b"{", 0), (json.dumps(base).encode(), 2), (b"{}", 1)):
        with pytest.raises(LaunchError) as caught:
            composed_config(bad, count, [layer], {}, "b")
        assert caught.value.code == "compose.bad_base"


def test_a_layer_of_a_feature_tarball_member_climbing_out_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("../escape")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    (tmp_path / "t.tar").write_bytes(buffer.getvalue())
    with pytest.raises(LaunchError) as caught:
        unpack([(tmp_path / "t.tar", "")], tmp_path / "feature")
    assert caught.value.code == "image.unsafe_layer"  # fetch_feature: compose.bad_feature


def test_composition_needs_a_sandbox_and_a_pinned_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flightdeck.launch.compose import _composer

    composer = _composer.FeatureComposer()
    with pytest.raises(LaunchError) as caught:
        composer._base("127.0.0.1:1/runner:1")
    assert caught.value.code == "compose.bad_base"
    with pytest.raises(LaunchError) as bad:
        composer._base("not a reference")
    assert bad.value.code == "compose.bad_base"
    monkeypatch.setattr(_composer, "bwrap_path", lambda: None)
    with pytest.raises(LaunchError) as none:
        composer.compose("127.0.0.1:1/runner@sha256:" + "a" * 64, [])
    assert none.value.code == "compose.no_sandbox"
