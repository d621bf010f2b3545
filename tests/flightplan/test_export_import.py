"""Issue 30: `skills export` / `skills import`, an OCI image layout tar for
a machine without a registry, verified on import as install verifies."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from tests.flightplan._machines import Machine, freeze, hello_plan, publisher, trust


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


def _write(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_export_then_import_on_a_machine_without_a_registry(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    frozen = freeze(first, hello_plan(tmp_path / "src", text="carried"), keys, "1.0.0")
    archive, again = tmp_path / "plan.tar", tmp_path / "again.tar"
    exported = first.ok("skills", "export", "hello-plan@1.0.0", "-o", str(archive))
    first.ok("skills", "export", "hello-plan@1.0.0", "-o", str(again))
    assert archive.read_bytes() == again.read_bytes()  # reproducible
    members = _members(archive)
    assert json.loads(members["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    tags = {
        m["annotations"]["org.opencontainers.image.ref.name"]: m["digest"]
        for m in json.loads(members["index.json"])["manifests"]
    }
    assert tags == {
        frozen["id"]: exported["digest"],
        "1.0.0": exported["digest"],
        "latest": exported["digest"],
    }

    second = Machine(tmp_path / "b")
    trust(second, keys)
    imported = second.ok("skills", "import", str(archive))
    assert imported["created"] is True and imported["origin"] == {}
    assert not (Path(imported["path"]) / "origin.json").exists()
    assert second.ok("skills", "import", str(archive), "--tag", "1.0.0")["created"] is False
    done = second.run("launch", "hello-plan@1.0.0", "--out-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "result.txt").read_text() == "carried"


def test_a_changed_or_foreign_archive_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    freeze(first, hello_plan(tmp_path / "src"), keys, "1.0.0")
    archive = tmp_path / "plan.tar"
    first.ok("skills", "export", "hello-plan@1.0.0", "-o", str(archive))
    second = Machine(tmp_path / "b")
    trust(second, keys)
    members = _members(archive)
    skill = next(n for n, d in members.items() if d.startswith(b"---\nname: hello-plan"))
    _write(tmp_path / "changed.tar", {**members, skill: members[skill].replace(b"world", b"WORLD")})
    second.refused("install.blob_mismatch", "skills", "import", str(tmp_path / "changed.tar"))
    (tmp_path / "junk.tar").write_bytes(b"not a tar at all" * 100)
    second.refused("install.layout_unreadable", "skills", "import", str(tmp_path / "junk.tar"))
    second.refused("install.not_found", "skills", "import", str(archive), "--tag", "2.0.0")
    assert second.stored() == []
