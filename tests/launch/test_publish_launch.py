"""Issue 30, done-when: a plan frozen on one machine is launched on another
that shares nothing with it but the registry.

Machine A freezes an image plan (its image in a source registry), launches
it, and publishes it to a second registry. The source registry and A's
workspace are then gone; machine B installs the plan from the second
registry and launches it: the image comes from the origin registry by the
digest the signed lock pins, and the outputs are A's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flightdeck.launch import bwrap_path
from tests.flightplan import _registry
from tests.flightplan._machines import Machine, freeze, publisher, trust

from . import _image
from .conftest import write_plan

pytestmark = [
    pytest.mark.skipif(bwrap_path() is None, reason="needs bubblewrap: apt-get install bubblewrap"),
    pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT),
    pytest.mark.skipif(not _image.busybox_available(), reason=_image.INSTALL_HINT),
]


def _image_plan(folder: Path, image: str) -> Path:
    folder.mkdir()
    return write_plan(
        folder,
        name="image-plan",
        environment={"image": image},
        outputs=[
            {
                "name": "report.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "report.txt"},
            }
        ],
        steps=[
            {
                "id": "inside",
                "kind": "tool",
                "command": [
                    "/bin/sh",
                    "-c",
                    "exec > /flightdeck/out/report.txt\ncat /etc/flightdeck-marker /etc/second",
                ],
                "collect": {"path": "/flightdeck/out"},
                "outputs": ["files"],
                "materializesOutput": "report.txt",
            }
        ],
    )


def test_install_and_launch_on_a_machine_sharing_only_the_registry(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    second = Machine(tmp_path / "b")
    trust(second, keys)
    for name in ("source", "target"):
        (tmp_path / name).mkdir()
    with _registry.running_registry(tmp_path / "target") as target:
        with _registry.running_registry(tmp_path / "source") as source:
            digest = _image.push(source, "vendor/busybox", "1", _image.busybox_layers())
            plan = _image_plan(tmp_path / "workspace", f"{source}/vendor/busybox:1")
            freeze(first, plan, keys, "1.0.0")
            done = first.run("launch", "image-plan@1.0.0", "--out-dir", str(tmp_path / "out-a"))
            assert done.returncode == 0, done.stderr
            published = first.ok("publish", "image-plan", "--registry", f"{target}/acme/plans")
            assert published["subject"] == digest
        # The source registry is stopped, A's workspace removed.
        shutil.rmtree(tmp_path / "workspace")
        installed = second.ok("install", f"{target}/acme/plans:1.0.0")
        assert installed["origin"]["registry"] == target
        done = second.run("launch", "image-plan@1.0.0", "--out-dir", str(tmp_path / "out-b"))
        assert done.returncode == 0, done.stderr
        dry = second.run("launch", "image-plan@1.0.0", "--dry-run")
        assert f"{target}/acme/plans@{digest}" in dry.stdout, dry.stdout
    report = (tmp_path / "out-b" / "report.txt").read_text()
    assert report == (tmp_path / "out-a" / "report.txt").read_text()
    assert report.startswith(_image.MARKER)
