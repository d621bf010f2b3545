"""The tool-step sandbox: bubblewrap when it is installed and works.

For a plan whose lock pins an image, `/` is that image's unpacked rootfs
(read-only, no host path at all); otherwise (tools-only environments, "host
tools, versions checked") it is the host's read-only system directories.
Either way: a private `/tmp`, `/proc` and
`/dev`, the step's mount path (read-only, holding `input.json`) and collect
path (writable), a cleared environment, and its own empty network
namespace (`--unshare-all`). A step whose sealed `lock.stepTrust` names
hosts reaches them only through the host-side egress proxy (`guard/_egress.py`),
whose Unix socket is bound into the sandbox.

No privilege survives into it (`guard.bwrap_privileges`: every capability
dropped, a user namespace of its own, root as "nobody"), so read-only binds
stay read-only even when flightdeck runs as root; `/` itself is remounted
read-only last. Bubblewrap creates a bind's mount point by following the
path inside the new root, so the step's mount and collect points never lie
where the image could redirect them: an image's top-level link or file of
the same name is not shown, and a point inside one of the image's
directories must already be a real directory there (checked with lstat).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from flightdeck.guard import SandboxLayout, bwrap_path, bwrap_privileges
from flightdeck.launch.core._errors import LaunchError

_SYSTEM_DIRS = SandboxLayout.SYSTEM_DIRS
_LINKS = SandboxLayout.USR_LINKS
SAFE_PATH = SandboxLayout.SAFE_PATH
# Mounted fresh in every sandbox (/run holds the egress proxy's socket): an
# image's entries of these names are never shown.
_FRESH = ("proc", "dev", "tmp", "run")
# Names no mount point may start with: bubblewrap's own while it builds the
# root (the host's `/` is at /oldroot then), and the kernel's file systems.
_NOT_POINTS = ("oldroot", "newroot", "proc", "dev")


def bwrap_argv(
    bwrap: str,
    command: list[str],
    *,
    mount: tuple[Path, str] | None,
    collect: tuple[Path, str] | None,
    env: dict[str, str],
    binds: list[tuple[Path, str]] | None = None,
    rootfs: Path | None = None,
) -> list[str]:
    points = [_point(where) for where in (mount, collect) if where is not None]
    # Never --share-net: a step with sealed hosts reaches them only through
    # the egress proxy's socket, bound in below.
    argv = [bwrap, *bwrap_privileges(), "--die-with-parent", "--new-session"]
    argv += ["--clearenv", "--unshare-all"]
    argv += _image_root(rootfs, points) if rootfs is not None else _host_root()
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if mount is not None:
        argv += ["--ro-bind", str(mount[0]), mount[1]]
    if collect is not None:
        argv += ["--bind", str(collect[0]), collect[1], "--chdir", collect[1]]
    for source, target in binds or ():
        argv += ["--bind", str(source), target]
    for key, value in {"PATH": SAFE_PATH, "HOME": "/tmp", **env}.items():
        argv += ["--setenv", key, value]
    argv += ["--remount-ro", "/"]  # last: the mount points above exist by now
    return [*argv, "--", *command]


def _point(where: tuple[Path, str]) -> PurePosixPath:
    """A step's mount or collect path: absolute, without `..`, and not in
    a place bubblewrap or the kernel owns."""
    path = PurePosixPath(where[1])
    parts = path.parts[1:]
    if not path.is_absolute() or not parts or ".." in parts or parts[0] in _NOT_POINTS:
        raise LaunchError(
            "tool.mount_point",
            f"the step's mount or collect path {where[1]!r} cannot be a mount point",
            hint="use an absolute path without `..`, outside /proc and /dev,"
            " such as /flightdeck/in and /flightdeck/out",
        )
    return path


def _host_root() -> list[str]:
    argv: list[str] = []
    for folder in _SYSTEM_DIRS:
        if Path(folder).is_dir():
            argv += ["--ro-bind", folder, folder]
    for target, link in _LINKS:
        if Path("/" + target).exists():
            argv += ["--symlink", target, link]
    return argv


def _image_root(rootfs: Path, points: list[PurePosixPath]) -> list[str]:
    """The image's top-level entries, read-only, on bubblewrap's own root
    (a tmpfs, remounted read-only at the end), so the mount, collect, /proc,
    /dev and /tmp mount points can be made whatever the image contains.
    Nothing of the host is bound."""
    claimed = {point.parts[1] for point in points}
    argv: list[str] = []
    with os.scandir(rootfs) as found:
        entries = sorted(found, key=lambda entry: entry.name)
    for entry in entries:
        mode = entry.stat(follow_symlinks=False).st_mode
        if entry.name in _FRESH or (entry.name in claimed and not stat.S_ISDIR(mode)):
            continue  # a link here would take a mount point wherever it points
        if stat.S_ISLNK(mode):
            argv += ["--symlink", os.readlink(entry.path), "/" + entry.name]
        elif stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            argv += ["--ro-bind", entry.path, "/" + entry.name]
    for point in points:
        _inside_image(rootfs, point)
    return [*argv, "--dir", "/run"]


def _inside_image(rootfs: Path, point: PurePosixPath) -> None:
    """A mount point in one of the image's own directories must be a real
    directory there already, every step of the way: bubblewrap would follow
    a link the image put in its path, or try to create it in a read-only bind."""
    parts = point.parts[1:]
    if parts[0] in _FRESH:
        return
    path = rootfs
    for depth, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0  # missing (or unreadable): bubblewrap would have to make it
        if depth == 0 and not stat.S_ISDIR(mode):
            return  # not shown from the image: flightdeck's own directory
        if not stat.S_ISDIR(mode):
            raise LaunchError(
                "tool.mount_point",
                f"the step's mount point {str(point)!r} lies in the image's"
                f" /{parts[0]}, where {'/' + '/'.join(parts[: depth + 1])!r}"
                " is not a directory",
                hint="mount and collect under a top-level directory the image does not"
                " have, such as /flightdeck/in and /flightdeck/out",
            )


__all__ = ["SAFE_PATH", "bwrap_argv", "bwrap_path"]
