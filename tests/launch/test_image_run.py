"""Issue 16, done-when: a tool step runs inside the image the lock pins.

The test builds a busybox image, pushes it to a real registry on loopback,
freezes a plan pinning it and launches it: the step reads the marker only
the image has and cannot see a host path; the image is then served from the
cache with no registry; a changed byte in a cached layer or in the
registry's blob is refused with its own code.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from flightdeck.flightplan import KeyPair, OciResolver, freeze_plan, generate_keys
from flightdeck.launch import StepSettings, bwrap_path
from flightdeck.launch.image._cache import ImageCache
from tests.flightplan import _registry
from tests.flightplan._resign import resign

from . import _image
from .conftest import Harness, write_plan

pytestmark = [
    pytest.mark.skipif(bwrap_path() is None, reason="needs bubblewrap: apt-get install bubblewrap"),
    pytest.mark.skipif(not _registry.available(), reason=_registry.INSTALL_HINT),
    pytest.mark.skipif(not _image.busybox_available(), reason=_image.INSTALL_HINT),
]

_CONTRACT: dict[str, Any] = {
    "credential": {"kind": "none"},
    "effect": "read",
    "idempotency": {"safeToRetry": True},
    "audit": {"fields": ["network-target"]},
}

SCRIPT = """
cat /etc/flightdeck-marker
for p in /usr/bin/python3 {host_only} /etc/removed-by-layer-2 /dev-null-copy /etc/second; do
  if test -e "$p"; then echo "$p seen"; else echo "$p absent"; fi
done
if echo x > /etc/written 2>/dev/null; then echo "/ writable"; else echo "/ read-only"; fi
echo scratch > /tmp/t && cat /tmp/t
"""


def _freeze(
    tmp_path: Path,
    address: str,
    script: str,
    hosts: list[str] | None = None,
    tools: list[str] | None = None,
    command: list[str] | None = None,
) -> Path:
    """Freeze the image plan; the stored version's directory."""
    source = tmp_path / "src"
    source.mkdir()
    reach = {"trustContract": {**_CONTRACT, "hosts": hosts}} if hosts else {}
    plan = write_plan(
        source,
        name="image-plan",
        environment={
            "image": f"{address}/flightdeck/busybox:1",
            **({"tools": tools} if tools else {}),
        },
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
                "command": command
                or ["/bin/sh", "-c", "exec > /flightdeck/out/report.txt\n" + script],
                "collect": {"path": "/flightdeck/out"},
                "outputs": ["files"],
                "materializesOutput": "report.txt",
                **reach,
            }
        ],
    )
    keys = generate_keys(tmp_path / "keys")
    resolver = OciResolver()
    try:
        outcome = freeze_plan(
            plan, signing_key=keys.private_path, version="1.0.0", resolver=resolver
        )
    finally:
        resolver.close()
    # Aileron's bare form; launch pulls from the repository `ref` names.
    assert outcome.frozen.lock["resolvedImages"][0]["digest"].startswith("sha256:")
    return outcome.stored.path


def _cache_blob(home: Path, layer: bytes) -> Path:
    found = list((home / "data" / "images").rglob(hashlib.sha256(layer).hexdigest()))
    assert len(found) == 1, found
    return found[0]


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.chmod(0o644)
    path.write_bytes(bytes(data))


def test_tool_step_runs_inside_the_pinned_image(
    harness: Harness, tmp_path: Path, fd_home: Path
) -> None:
    host_only = tmp_path / "host-only.txt"
    host_only.write_text("the host's\n")
    layers = _image.busybox_layers()
    registry_dir = tmp_path / "registry"
    registry_dir.mkdir()
    with _registry.running_registry(registry_dir) as address:
        digest = _image.push(address, "flightdeck/busybox", "1", layers)
        _freeze(tmp_path, address, SCRIPT.format(host_only=host_only))
        # One changed byte in the registry's copy of a layer: refused at pull.
        hexdigest = hashlib.sha256(layers[0][0]).hexdigest()
        blobs = registry_dir / "storage" / "docker" / "registry" / "v2" / "blobs" / "sha256"
        stored = blobs / hexdigest[:2] / hexdigest
        _flip(stored / "data", 1000)
        tampered = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
        assert tampered.status == "failed" and tampered.error is not None
        assert tampered.error.code == "image.blob_mismatch", tampered.error
        assert ImageCache().entries() == []
        _flip(stored / "data", 1000)
        first = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert first.status == "completed", first.error
    report = (tmp_path / "out" / "report.txt").read_text()
    assert report.splitlines() == [
        _image.MARKER.strip(),
        "/usr/bin/python3 absent",
        f"{host_only} absent",
        "/etc/removed-by-layer-2 absent",
        "/dev-null-copy absent",
        "/etc/second seen",
        "/ read-only",
        "scratch",
    ]
    record = harness.records("launch.tool_network")[1]
    assert record["environment"] == f"image {address}/flightdeck/busybox@{digest}"
    assert record["image"]["pulled"] is True
    assert [e["digest"] for e in ImageCache().entries()] == [digest]

    # The registry is gone: the cached, re-verified image still runs.
    (tmp_path / "out" / "report.txt").unlink()
    again = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert again.status == "completed", again.error
    assert harness.records("launch.tool_network")[2]["image"]["pulled"] is False

    # One changed byte in a cached layer: refused, nothing runs.
    _flip(_cache_blob(fd_home, layers[0][0]), 1000)
    corrupt = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert corrupt.status == "failed" and corrupt.error is not None
    assert corrupt.error.code == "image.cache_corrupt", corrupt.error
    assert ImageCache().prune() == [digest]


def test_a_lock_with_the_older_name_at_digest_form_still_pulls(
    harness: Harness, tmp_path: Path
) -> None:
    """Before Aileron's bare form, freeze wrote `<name>@sha256:<hex>`."""
    (tmp_path / "registry").mkdir()
    with _registry.running_registry(tmp_path / "registry") as address:
        digest = _image.push(address, "flightdeck/busybox", "1", _image.busybox_layers())
        folder = _freeze(tmp_path, address, "cat /etc/flightdeck-marker")
        old = f"{address}/flightdeck/busybox@{digest}"

        def older(data: dict[str, Any]) -> None:
            data["aileron"]["lock"]["resolvedImages"][0]["digest"] = old

        keys = tmp_path / "keys"
        resign(folder, KeyPair(keys / "flightdeck.key", keys / "flightdeck.pub", ""), older)
        lock = json.loads((folder / "lock.json").read_text())
        assert lock["resolvedImages"][0]["digest"] == old
        folder.rename(folder.with_name(lock["contentHash"][7:23]))  # its new hash
        result = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert result.status == "completed", result.error
    record = harness.records("launch.tool_network")[0]
    assert record["environment"] == f"image {old}" and record["image"]["pulled"] is True


def test_the_workspace_images_limits_bound_the_pull(harness: Harness, tmp_path: Path) -> None:
    """`[images]` in the workspace's flightdeck.toml: busybox unpacks to
    about 2 MiB, over a 1 MiB limit, so the step fails before it runs and
    nothing is cached; without the limit the same plan runs."""
    (tmp_path / "registry").mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "flightdeck.toml").write_text("[images]\nmax_unpacked_mib = 1\n")
    with _registry.running_registry(tmp_path / "registry") as address:
        _image.push(address, "flightdeck/busybox", "1", _image.busybox_layers())
        _freeze(tmp_path, address, "cat /etc/flightdeck-marker > /flightdeck/out/report.txt")
        bounded = StepSettings(workspace=str(workspace), retry_base_delay=0.0)
        result = harness.run("image-plan@1.0.0", unsigned=False, settings=bounded)  # type: ignore[arg-type]
        assert result.status == "failed" and result.error is not None
        assert result.error.code == "image.too_large", result.error
        assert ImageCache().entries() == []
        (workspace / "flightdeck.toml").write_text("[images]\nmax_unpacked_mib = 16\n")
        again = harness.run("image-plan@1.0.0", unsigned=False, settings=bounded)  # type: ignore[arg-type]
    assert again.status == "completed", again.error


# (No `wget -T`: busybox-static 1.35 crashes on it.)
NET = """
wget -q -O - http://127.0.0.1:{declared}/ || echo "declared failed"
wget -q -O - http://127.0.0.1:{other}/ 2>/dev/null || echo "other refused"
wget -q -Y off -O - http://127.0.0.1:{other}/ 2>/dev/null || echo "direct refused"
"""


def test_an_image_without_python_reaches_only_its_sealed_hosts(
    harness: Harness, tmp_path: Path
) -> None:
    """The relay runs from the host in the sandbox's network namespace: the
    busybox image has no python3, and egress still holds."""
    hits: list[int] = []

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.server.server_address[1])
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello from the declared host")

        def log_message(self, *args: Any) -> None:
            pass

    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    declared, other = (s.server_address[1] for s in servers)
    registry_dir = tmp_path / "registry"
    registry_dir.mkdir()
    try:
        with _registry.running_registry(registry_dir) as address:
            _image.push(address, "flightdeck/busybox", "1", _image.busybox_layers())
            script = NET.format(declared=declared, other=other)
            _freeze(tmp_path, address, script, hosts=[f"127.0.0.1:{declared}"])
            result = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    finally:
        for server in servers:
            server.shutdown()
    assert hits == [declared]
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "egress_denied"  # the attempt on the other port
    record = harness.records("launch.tool_network")[0]
    assert record["contacted"] == [f"127.0.0.1:{declared}"]
    assert record["denied"] == [f"127.0.0.1:{other}"]


FAKE_JQ = """#!/bin/sh
echo jq-{version}
echo "jq $* ran in the image" > /flightdeck/out/report.txt 2>/dev/null || true
"""


@pytest.mark.parametrize(("inside", "status"), [("1.7.1", "completed"), ("1.6", "failed")])
def test_tool_versions_are_checked_inside_the_image(
    harness: Harness, tmp_path: Path, inside: str, status: str
) -> None:
    jq = _image.layer(
        [
            ("usr/", "dir", b""),
            ("usr/bin/", "dir", b""),
            ("usr/bin/jq", "exec", FAKE_JQ.format(version=inside)),
        ]
    )
    registry_dir = tmp_path / "registry"
    registry_dir.mkdir()
    with _registry.running_registry(registry_dir) as address:
        _image.push(address, "flightdeck/busybox", "1", [*_image.busybox_layers(), (jq, False)])
        _freeze(tmp_path, address, "", tools=["jq@1.7.1"], command=["jq", "."])
        result = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert result.status == status, result.error
    if status == "completed":
        assert (tmp_path / "out" / "report.txt").read_text() == "jq . ran in the image\n"
        record = harness.records("launch.tool_network")[0]
        assert record["tool_version"] == {"tool": "jq", "version": "1.7.1"}
    else:
        assert result.error is not None and result.error.code == "tool.version_mismatch"
        assert "1.6" in result.error.message


def test_a_hostile_image_run_as_root_changes_nothing_on_the_host(
    harness: Harness, tmp_path: Path
) -> None:
    """Issue 28, from an image: its top-level `flightdeck` linked to
    `/oldroot/<dir>` made bubblewrap create `<dir>/in` and `<dir>/out` on the
    host; with every capability kept `mount -o remount,rw,bind` let the
    step rewrite its own image in the host's cache."""
    from tests.guard._attacks import assert_unprivileged, attack_script

    target = tmp_path / "host-dir"
    target.mkdir()
    hostile = _image.layer(
        [
            *[(f"bin/{a}", "link", "busybox") for a in ("grep", "mount", "umount", "touch")],
            ("flightdeck", "link", f"/oldroot{target}"),
        ]
    )
    places = ["/", "/bin", "/etc", "/etc/flightdeck-marker", "/flightdeck/in"]
    script = attack_script(
        remount=places,
        write=["/bin/planted", "/etc/flightdeck-marker", "/planted"],
        unmount=["/etc", "/bin"],
        mounts=("mount", "busybox mount"),
    )
    registry_dir = tmp_path / "registry"
    registry_dir.mkdir()
    with _registry.running_registry(registry_dir) as address:
        layers = [*_image.busybox_layers(), (hostile, False)]
        _image.push(address, "flightdeck/busybox", "1", layers)
        _freeze(tmp_path, address, script)
        first = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert list(target.iterdir()) == []
    assert first.status == "completed", first.error
    report = (tmp_path / "out" / "report.txt").read_text()
    assert_unprivileged(report, expected_attempts=len(places) * 4 + 3 + 2 * 4)
    # The cached image re-verifies (its tree digest) and runs unchanged.
    again = harness.run("image-plan@1.0.0", unsigned=False)  # type: ignore[arg-type]
    assert again.status == "completed", again.error
    assert harness.records("launch.tool_network")[-1]["image"]["pulled"] is False
    rootfs = next(ImageCache().root.rglob("rootfs"))
    assert (rootfs / "etc" / "flightdeck-marker").read_text() == _image.MARKER
    assert not (rootfs / "bin" / "planted").exists() and not (rootfs / "planted").exists()
