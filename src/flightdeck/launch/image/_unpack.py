"""Unpacking verified layers into a root filesystem that cannot reach out of itself.

Layers apply in manifest order. Each is read twice, streamed (`_tar`):
the first pass checks every member against the pull's bounds (entries,
bytes each and in all, counting a sparse member at its declared size) and
collects the whiteouts, which then act on the layers below (`.wh.<name>`
removes `<name>`, `.wh..wh..opq` empties its directory); the second pass
writes the other members. Every change goes through the rootfs's directory
descriptors (`_rootfs`): no path, link, hard link or whiteout can name
anything outside it, whatever `realpath` or tarfile's filters would say.
Files get their permission bits with setuid/setgid/sticky and group/other
write cleared (tarfile's `data` rule), directories 0755, owners are not
applied, device nodes and fifos are dropped and listed. `tree_digest`
hashes the result so a cached rootfs can be re-verified.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tarfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._fdtree import FILE_FLAGS, walk
from flightdeck.launch.image._pull_limits import PullLimits
from flightdeck.launch.image._rootfs import MAX_DEPTH, Refused, Rootfs, clean
from flightdeck.launch.image._tar import BLOCK, Layer, open_layer

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
_HINTS = {
    "unsafe_layer": "the image's layers name paths or links outside its root filesystem,"
    " or are not tar archives flightdeck can read safely",
    "too_large": "the image is larger than the pull limits ([images] in flightdeck.toml)",
    "pull_timeout": "the pull took longer than [images] pull_timeout",
}
# What a malformed layer can make tarfile, gzip or the file system raise.
_BROKEN = (
    tarfile.TarError,
    OSError,
    EOFError,
    zlib.error,
    ValueError,
    OverflowError,
    RecursionError,
    UnicodeError,
)


@dataclass
class _Spent:
    """What the layers so far cost against the pull's limits."""

    limits: PullLimits
    deadline: float | None
    entries: int = 0
    unpacked: int = 0

    def member(self, member: tarfile.TarInfo) -> None:
        self.entries += 1
        if member.size < 0:  # base-256 or PAX sizes can be negative: no credit against the bounds
            raise Refused("unsafe_layer", f"{member.name} declares a negative size")
        if self.entries > self.limits.max_entries:
            raise Refused("too_large", f"more than {self.limits.max_entries:,} entries")
        if member.size > self.limits.max_entry_bytes:
            raise Refused(
                "too_large",
                f"{member.name} declares {member.size:,} bytes, over the"
                f" {self.limits.max_entry_bytes:,} one entry may have",
            )
        self.unpacked += member.size + BLOCK
        self.check()
        self.clock()

    def check(self) -> None:
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise Refused(
                "too_large",
                f"the layers unpack to more than {self.limits.max_unpacked_bytes:,} bytes",
            )

    def clock(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Refused("pull_timeout", "the pull's deadline passed while unpacking")


def unpack(
    layers: list[tuple[Path, str]],
    rootfs: Path,
    limits: PullLimits | None = None,
    deadline: float | None = None,
) -> list[str]:
    """Apply `(verified blob file, compression)` layers in order, read from
    disk as they stream; the dropped members. Raises `LaunchError`
    (`image.unsafe_layer`, `image.too_large`, `image.pull_timeout`)."""
    spent = _Spent(limits or PullLimits(), deadline)
    rootfs.mkdir(parents=True, exist_ok=True)
    dropped: list[str] = []
    tree = Rootfs(rootfs)
    try:
        for number, (blob, compression) in enumerate(layers):
            try:
                _apply(tree, blob, compression, spent, dropped)
            except Refused as exc:
                raise LaunchError(
                    f"image.{exc.code}",
                    f"layer {number + 1} cannot be unpacked: {exc.reason}",
                    hint=_HINTS[exc.code],
                ) from None
            except _BROKEN as exc:
                raise LaunchError(
                    "image.unsafe_layer",
                    f"layer {number + 1} cannot be unpacked safely: {exc}",
                    hint=_HINTS["unsafe_layer"],
                ) from None
    finally:
        tree.close()
    return dropped


def _apply(tree: Rootfs, blob: Path, compression: str, spent: _Spent, dropped: list[str]) -> None:
    before = spent.unpacked
    room = spent.limits.max_unpacked_bytes - before
    whiteouts: list[list[str]] = []
    with contextlib.ExitStack() as stack:
        layer = open_layer(blob, compression, room, stack)
        for member in layer.members():
            spent.member(member)
            parts = clean(member.name)
            if parts and parts[-1].startswith(WHITEOUT):
                whiteouts.append(parts)
            elif not parts and not member.isdir():
                raise Refused("unsafe_layer", f"{member.name!r} names the image root itself")
            elif not (member.isdir() or member.issym() or member.islnk() or member.isdev()):
                layer.regions(member)  # a malformed sparse map is refused before any write
        # The stream itself (headers, padding) counts when it is more than
        # what the members declare.
        spent.unpacked += max(0, layer.metered.consumed - (spent.unpacked - before))
        spent.check()
    for parts in whiteouts:
        if parts[-1] == OPAQUE:
            tree.opaque(parts[:-1])
        else:
            tree.whiteout(parts[:-1], parts[-1][len(WHITEOUT) :])
    with contextlib.ExitStack() as stack:
        layer = open_layer(blob, compression, room, stack)
        for member in layer.members():
            spent.clock()
            parts = clean(member.name)
            if parts and parts[-1].startswith(WHITEOUT):
                continue
            _extract(tree, layer, member, parts, dropped)


def _extract(
    tree: Rootfs, layer: Layer, member: tarfile.TarInfo, parts: list[str], dropped: list[str]
) -> None:
    if member.isdir():
        tree.put_dir(parts)
    elif member.issym():
        tree.put_symlink(parts, member.linkname)
    elif member.islnk():
        tree.put_hardlink(parts, member.linkname)
    elif member.isdev():  # character and block devices, fifos
        dropped.append(member.name)
    else:  # regular files, and types tarfile does not know (it writes them as files)
        fd = tree.new_file(parts)
        try:
            for offset, data in layer.chunks(member):
                written = 0 if data.count(0) != len(data) else len(data)  # zeros: a hole
                while written < len(data):
                    written += os.pwrite(fd, data[written:], offset + written)
            os.ftruncate(fd, member.size)
            os.fchmod(fd, _file_mode(member.mode))
            with contextlib.suppress(OSError, OverflowError, ValueError):
                os.utime(fd, (member.mtime, member.mtime))
        finally:
            os.close(fd)


def _file_mode(mode: int) -> int:
    """tarfile's `data` rule: no setuid/setgid/sticky, no group/other write,
    executable only if the owner may execute, owner read/write."""
    mode &= 0o755
    if not mode & 0o100:
        mode &= ~0o111
    return mode | 0o600


def tree_digest(rootfs: Path) -> str:
    """sha256 over every entry's path, type, permission bits and content
    (link target for symlinks), in sorted order (the bytes the earlier
    `os.walk` version hashed, so cached images stay valid)."""
    digest = hashlib.sha256()
    for entry in walk(rootfs, max_depth=MAX_DEPTH):
        mode = entry.info.st_mode
        head = f"{entry.relative}\0{stat.S_IFMT(mode)}\0{mode & 0o7777}\0"
        digest.update(head.encode("utf-8", "surrogateescape"))
        if stat.S_ISLNK(mode):
            digest.update(os.fsencode(os.readlink(entry.name, dir_fd=entry.parent_fd)))
        elif stat.S_ISREG(mode):
            fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.parent_fd)
            try:
                while chunk := os.read(fd, 1 << 20):
                    digest.update(chunk)
            finally:
                os.close(fd)
        digest.update(b"\0\0")
    return "sha256:" + digest.hexdigest()


__all__ = ["tree_digest", "unpack"]
