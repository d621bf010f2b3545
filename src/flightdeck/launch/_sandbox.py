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
"""

from __future__ import annotations

import os
from pathlib import Path

from flightdeck.guard import SandboxLayout, bwrap_path

_SYSTEM_DIRS = SandboxLayout.SYSTEM_DIRS
_LINKS = SandboxLayout.USR_LINKS
SAFE_PATH = SandboxLayout.SAFE_PATH


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
    # Never --share-net: a step with sealed hosts reaches them only through
    # the egress proxy's socket, bound in below.
    argv = [bwrap, "--die-with-parent", "--new-session", "--clearenv", "--unshare-all"]
    argv += _image_root(rootfs) if rootfs is not None else _host_root()
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if mount is not None:
        argv += ["--ro-bind", str(mount[0]), mount[1]]
    if collect is not None:
        argv += ["--bind", str(collect[0]), collect[1], "--chdir", collect[1]]
    for source, target in binds or ():
        argv += ["--bind", str(source), target]
    for key, value in {"PATH": SAFE_PATH, "HOME": "/tmp", **env}.items():
        argv += ["--setenv", key, value]
    if rootfs is not None:
        argv += ["--remount-ro", "/"]  # last: the mount points above exist by now
    return [*argv, "--", *command]


def _host_root() -> list[str]:
    argv: list[str] = []
    for folder in _SYSTEM_DIRS:
        if Path(folder).is_dir():
            argv += ["--ro-bind", folder, folder]
    for target, link in _LINKS:
        if Path("/" + target).exists():
            argv += ["--symlink", target, link]
    return argv


def _image_root(rootfs: Path) -> list[str]:
    """The image's top-level entries, read-only, on bubblewrap's own root
    (a tmpfs, remounted read-only at the end), so the mount, collect, /proc,
    /dev and /tmp mount points can be made whatever the image contains.
    Nothing of the host is bound."""
    argv: list[str] = []
    for entry in sorted(rootfs.iterdir()):
        if entry.name in ("proc", "dev", "tmp", "run"):
            continue  # mounted fresh; /run holds the egress proxy's socket
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry), "/" + entry.name]
        elif entry.is_dir() or entry.is_file():
            argv += ["--ro-bind", str(entry), "/" + entry.name]
    return [*argv, "--dir", "/run"]


__all__ = ["SAFE_PATH", "bwrap_argv", "bwrap_path"]
