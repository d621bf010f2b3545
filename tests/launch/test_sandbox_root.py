"""The tool-step sandbox against a command run as root (issue 28), with a
real bubblewrap: no capability, nothing read-only made writable, and no
mount point made where an image's link points (docs/launch.md, "Running as
root"). The rootfs here is built on disk, as the image cache holds one; the
pull-and-launch path is tests/launch/test_image_run.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.launch import LaunchError, bwrap_path
from flightdeck.launch.sandbox._bwrap import bwrap_argv
from tests.guard._attacks import assert_unprivileged, attack_script, without_user_namespaces
from tests.launch import _image

pytestmark = [
    pytest.mark.skipif(bwrap_path() is None, reason="needs bubblewrap: apt-get install bubblewrap"),
    pytest.mark.skipif(not _image.busybox_available(), reason=_image.INSTALL_HINT),
]

APPLETS = ("sh", "cat", "grep", "mount", "umount", "touch", "echo", "ls")


def _rootfs(tmp_path: Path) -> Path:
    """What the image cache holds for a busybox image."""
    rootfs = tmp_path / "cache" / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    shutil.copy(_image.BUSYBOX, rootfs / "bin" / "busybox")
    for applet in APPLETS:
        (rootfs / "bin" / applet).symlink_to("busybox")
    (rootfs / "etc").mkdir()
    (rootfs / "etc" / "marker").write_text(_image.MARKER)
    (rootfs / "sbin").symlink_to("bin")  # top-level links and files are shown
    (rootfs / "top-level-file").write_text("top\n")
    return rootfs


@pytest.fixture(params=["user namespace", "capabilities only"])
def privileges(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[bool]:
    """Each attack twice: as the probe finds bubblewrap here, and as on a
    host without user namespaces (capabilities dropped alone, root's uid)."""
    if request.param == "user namespace":
        yield True
        return
    with without_user_namespaces(tmp_path / "no-userns", monkeypatch):
        yield False


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    out = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path)] = (info.st_mode, data)
    return out


def _run(
    tmp_path: Path,
    script: str,
    *,
    rootfs: Path | None,
    mount: str = "/flightdeck/in",
    collect: str = "/flightdeck/out",
) -> tuple[subprocess.CompletedProcess[str], Path]:
    scratch = tmp_path / f"scratch-{uuid.uuid4().hex[:8]}"
    (scratch / "in").mkdir(parents=True)
    (scratch / "out").mkdir()
    (scratch / "in" / "input.json").write_text("{}")
    argv = bwrap_argv(
        str(bwrap_path()),
        ["/bin/sh", "-c", script],
        mount=(scratch / "in", mount),
        collect=(scratch / "out", collect),
        env={},
        rootfs=rootfs,
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    return done, scratch / "out"


def test_an_image_sandbox_holds_no_privilege_and_its_cache_stays_read_only(
    tmp_path: Path, privileges: bool
) -> None:
    """With every capability kept (bubblewrap's default for root) `mount -o
    remount,rw,bind /bin` let a step rewrite the image cache on the host."""
    rootfs = _rootfs(tmp_path)
    before = _snapshot(rootfs)
    places = ["/", "/bin", "/etc", "/etc/marker", "/flightdeck/in"]
    script = attack_script(
        remount=places,
        unmount=["/etc", "/flightdeck/in"],
        write=["/bin/planted", "/etc/marker", "/planted", "/flightdeck/in/planted"],
        mounts=("mount", "busybox mount"),
    )
    done, _ = _run(tmp_path, script, rootfs=rootfs)
    expected = len(places) * 4 + 2 * 4 + 4
    assert_unprivileged(done.stdout, expected_attempts=expected, as_nobody=privileges)
    assert _snapshot(rootfs) == before


def test_a_host_tools_sandbox_holds_no_privilege_and_opt_stays_read_only(
    tmp_path: Path, privileges: bool
) -> None:
    """A host-tools step remounted the host's /opt writable and wrote to it."""
    marker = f"/opt/flightdeck-escape-{uuid.uuid4().hex}"
    places = ["/", "/usr", "/opt", "/etc", "/flightdeck/in"]
    script = attack_script(remount=places, unmount=["/usr", "/opt"], write=[marker, "/planted"])
    try:
        done, _ = _run(tmp_path, script, rootfs=None)
        expected = len(places) * 4 + 2 * 4 + 2
        assert_unprivileged(done.stdout, expected_attempts=expected, as_nobody=privileges)
        assert not os.path.exists(marker)
    finally:
        Path(marker).unlink(missing_ok=True)


def test_the_step_can_still_read_root_owned_files_and_write_its_collect_dir(
    tmp_path: Path,
) -> None:
    """Unprivileged is not crippled: the image's files (owned by whoever
    unpacked them, root here) read as ever, and the collect dir takes files."""
    rootfs = _rootfs(tmp_path)
    (rootfs / "etc" / "owner-only").write_text("mine\n")
    (rootfs / "etc" / "owner-only").chmod(0o600)
    script = (
        "cat /etc/marker /etc/owner-only /top-level-file > report.txt; /sbin/echo linked"
        " >> report.txt; cat /flightdeck/in/input.json"
    )
    done, out = _run(tmp_path, script, rootfs=rootfs)
    assert done.returncode == 0, done.stderr
    assert (out / "report.txt").read_text() == _image.MARKER + "mine\ntop\nlinked\n"
    assert done.stdout == "{}"


def test_an_image_link_named_like_a_mount_point_redirects_nothing(tmp_path: Path) -> None:
    """An image whose top-level `flightdeck` links to `/oldroot/<dir>` made
    bubblewrap create `<dir>/in` and `<dir>/out` on the host."""
    target = tmp_path / "host-dir"
    target.mkdir()
    rootfs = _rootfs(tmp_path)
    (rootfs / "flightdeck").symlink_to(f"/oldroot{target}")
    (rootfs / "work").symlink_to(f"/oldroot{target}")
    (rootfs / "tmp").symlink_to(f"/oldroot{target}")  # mounted fresh whatever the image says
    runs = [
        _run(tmp_path, "echo ran > report.txt", rootfs=rootfs, collect=collect)
        for collect in ("/flightdeck/out", "/work/out", "/tmp/out")
    ]
    assert list(target.iterdir()) == []
    for done, out in runs:  # flightdeck's own mount points, not the image's links
        assert done.returncode == 0, done.stderr
        assert (out / "report.txt").read_text() == "ran\n"


def test_the_images_own_proc_dev_tmp_and_run_are_never_shown(tmp_path: Path) -> None:
    """bubblewrap mounts these fresh; an image's links of those names would
    take the mounts (and the directories made for them) onto the host."""
    target = tmp_path / "host-dir"
    target.mkdir()
    rootfs = _rootfs(tmp_path)
    for name in ("proc", "dev", "tmp", "run"):
        (rootfs / name).symlink_to(f"/oldroot{target}/{name}-made")
    done, out = _run(
        tmp_path, "ls /proc/self/status /dev/null /tmp /run > report.txt", rootfs=rootfs
    )
    assert list(target.iterdir()) == []
    assert done.returncode == 0, done.stderr
    assert "/proc/self/status" in (out / "report.txt").read_text()


def test_a_mount_point_inside_an_image_directory_must_be_a_real_directory_there(
    tmp_path: Path,
) -> None:
    target = tmp_path / "host-dir"
    target.mkdir()
    rootfs = _rootfs(tmp_path)
    (rootfs / "work" / "out").mkdir(parents=True)
    (rootfs / "work" / "readme").write_text("the image's own /work\n")
    (rootfs / "etc" / "link").symlink_to(f"/oldroot{target}")
    (rootfs / "etc" / "file").write_text("x")
    done, out = _run(tmp_path, "cat ../readme > report.txt", rootfs=rootfs, collect="/work/out")
    assert done.returncode == 0, done.stderr  # the image's own real directory, shown
    assert (out / "report.txt").read_text() == "the image's own /work\n"
    for collect in ("/etc/link/out", "/etc/link", "/etc/file", "/etc/missing", "/work/out/deeper"):
        with pytest.raises(LaunchError) as caught:
            _run(tmp_path, "true", rootfs=rootfs, collect=collect)
        assert caught.value.code == "tool.mount_point", collect
        assert "is not a directory" in caught.value.message
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    "path",
    [
        "flightdeck/out",
        "/",
        "/flightdeck/../oldroot/x",
        "/oldroot/x",
        "/newroot/x",
        "/proc/x",
        "/dev",
    ],
)
def test_mount_points_bubblewrap_or_the_kernel_owns_are_refused(tmp_path: Path, path: str) -> None:
    for rootfs in (_rootfs(tmp_path / "one"), None):
        with pytest.raises(LaunchError) as caught:
            _run(tmp_path, "true", rootfs=rootfs, collect=path)
        assert caught.value.code == "tool.mount_point"
        with pytest.raises(LaunchError):
            _run(tmp_path, "true", rootfs=rootfs, mount=path)
