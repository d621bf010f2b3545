"""Issue 30, item 4: the driver code travels with the published version.

A plan calling a workspace driver is frozen (its code pinned), published,
and installed on a machine without the workspace: launch runs the driver
from the files install stored beside the version, checked against the pins.
A registry serving other driver code, and a workspace changed since freeze,
are refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.flightplan import _oci_server
from tests.flightplan._machines import PUBLISHER, Machine, publisher, trust

from .test_code_pins import _workspace

MODULE = "packages/greetpkg/__init__.py"
DRIVERS = "application/vnd.flightdeck.flightplan.drivers.v1.tar"


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("GREET_MARKS", str(folder))
    return folder


def _freeze(machine: Machine, ws: Path, keys: Path) -> None:
    machine.ok(
        "freeze", str(ws / "SKILL.md"), "--workspace", str(ws),
        "--signing-key", str(keys / "flightdeck.key"), "--version", "1.0.0",
        "--publisher", PUBLISHER,
    )  # fmt: skip


def test_the_pinned_driver_code_travels_and_runs_without_the_workspace(
    tmp_path: Path, marks: Path
) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    ws = _workspace(tmp_path)
    _freeze(first, ws, keys)
    with _oci_server.serving() as registry:
        repo = f"{registry.address}/acme/plans"
        published = first.ok("publish", "greeting", "--registry", repo)
        manifest = json.loads(registry.manifest("acme/plans", "latest"))
        [layer] = [item for item in manifest["layers"] if item["mediaType"] == DRIVERS]
        with tarfile.open(fileobj=io.BytesIO(registry.blobs[layer["digest"]])) as tar:
            assert sorted(tar.getnames()) == [
                ".drivers/greeter/DRIVER.md",
                ".tools/greet/TOOL.md",
                "packages/greetpkg/__init__.py",
            ]
        assert first.ok("publish", "greeting", "--registry", repo)["digest"] == published["digest"]
        shutil.rmtree(ws)
        second = Machine(tmp_path / "b")
        trust(second, keys)
        installed = second.ok("install", repo)
    stored = Path(installed["path"]) / "workspace"
    assert (stored / "packages" / "greetpkg" / "__init__.py").is_file()
    done = second.run(
        "launch", "greeting@1.0.0", "--input", "who=ada", "--out-dir", str(tmp_path / "out"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (marks / "called").read_text() == "ada"

    # The stored copy edited afterwards: launch refuses it, as any workspace.
    (marks / "called").unlink()
    module = stored / "packages" / "greetpkg" / "__init__.py"
    module.write_text(module.read_text() + "\n# edited\n")
    again = second.run("launch", "greeting@1.0.0", "--input", "who=ada", cwd=tmp_path)
    assert again.returncode == 1 and "launch.code_changed" in again.stderr
    assert not (marks / "called").exists()


def test_other_driver_code_from_the_registry_is_refused(tmp_path: Path, marks: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    _freeze(first, _workspace(tmp_path), keys)
    with _oci_server.serving() as registry:
        repo = f"{registry.address}/acme/plans"
        first.ok("publish", "greeting", "--registry", repo)
        manifest = json.loads(registry.manifest("acme/plans", "latest"))
        second = Machine(tmp_path / "b")
        trust(second, keys)
        index = next(i for i, item in enumerate(manifest["layers"]) if item["mediaType"] == DRIVERS)
        for change in ("edited", "extra", "missing", "not-a-tar"):
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                names = [".drivers/greeter/DRIVER.md", ".tools/greet/TOOL.md", MODULE]
                for name, data in (
                    *[(name, ws_file(tmp_path, name)) for name in names],
                    ("packages/greetpkg/evil.py", b"import os\n"),
                ):
                    if name.endswith("evil.py") and change != "extra":
                        continue
                    if name.endswith("TOOL.md") and change == "missing":
                        continue
                    if name.endswith("__init__.py") and change == "edited":
                        data = data + b"\nimport os\n"
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
            raw = buffer.getvalue() if change != "not-a-tar" else b"\0" * 1024 + b"junk"
            digest = "sha256:" + hashlib.sha256(raw).hexdigest()
            registry.blobs[digest] = raw
            manifest["layers"][index] = {
                **manifest["layers"][index],
                "digest": digest,
                "size": len(raw),
            }
            registry.manifests[("acme/plans", "latest")] = (
                json.dumps(manifest).encode(),
                "application/vnd.oci.image.manifest.v1+json",
            )
            error = second.refused("install.code_mismatch", "install", repo)
            assert "driver code" in error["message"], change
            assert second.stored() == [], change


def ws_file(tmp_path: Path, name: str) -> bytes:
    return (tmp_path / "ws" / name).read_bytes()


def test_a_workspace_changed_since_freeze_is_not_published(tmp_path: Path, marks: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    ws = _workspace(tmp_path)
    _freeze(first, ws, keys)
    module = ws / "packages" / "greetpkg" / "__init__.py"
    module.write_text(module.read_text() + "\n# later\n")
    with _oci_server.serving() as registry:
        repo = f"{registry.address}/acme/plans"
        first.refused("publish.code_changed", "publish", "greeting", "--registry", repo)
        shutil.rmtree(ws)
        first.refused("publish.code_unavailable", "publish", "greeting", "--registry", repo)
        assert registry.manifests == {}
    assert os.environ["GREET_MARKS"] == str(marks)
