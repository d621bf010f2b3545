"""What a Feature's install changed in a rootfs, as one normalised layer.

`snapshot` records every entry of the tree (walked through descriptors,
links never followed) by its type, permission bits, size, inode, change
and modification times and, for a link, its target: a write changes the
change time, which no unprivileged process can set back, so an entry whose
record is the same was not touched. `diff` compares two snapshots: entries
new or changed are written, entries gone become whiteouts (`.wh.<name>`,
one for the topmost of a removed tree).

`write_layer` writes them with the standard library's `tarfile` (PAX
format; a header is only added for what ustar cannot hold) in the walk's
order, whiteouts last and sorted, every member's time 0, owner and group 0
with no names, and only the permission bits: the same changes give the
same bytes on any machine, so the same inputs give the same digest. A
change the layer must not carry is refused (`Refused("unsafe_change")`):
a device node, fifo or socket, or a relative link whose `..` climbs above
the root (the unpacker would refuse the layer anyway, on every machine).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flightdeck.launch.image._fdtree import FILE_FLAGS, walk
from flightdeck.launch.image._rootfs import MAX_DEPTH, Refused, climbs_out

# path -> (type, permission bits, size, inode, ctime ns, mtime ns, link target)
Record = tuple[int, int, int, int, int, int, str]
Snapshot = dict[str, Record]
_KINDS = {
    stat.S_IFREG: tarfile.REGTYPE,
    stat.S_IFDIR: tarfile.DIRTYPE,
    stat.S_IFLNK: tarfile.SYMTYPE,
}


def snapshot(rootfs: Path) -> Snapshot:
    records: Snapshot = {}
    for entry in walk(rootfs, max_depth=MAX_DEPTH):
        info = entry.info
        kind = stat.S_IFMT(info.st_mode)
        target = os.readlink(entry.name, dir_fd=entry.parent_fd) if kind == stat.S_IFLNK else ""
        size = info.st_size if kind != stat.S_IFDIR else 0
        records[entry.relative] = (
            kind,
            info.st_mode & 0o7777,
            size,
            info.st_ino,
            info.st_ctime_ns,
            info.st_mtime_ns,
            target,
        )
    return records


@dataclass(frozen=True)
class Changes:
    written: frozenset[str]  # paths new or changed
    removed: tuple[str, ...]  # the topmost paths gone, sorted


def diff(before: Snapshot, after: Snapshot, ignore: Iterable[str] = ()) -> Changes:
    """The changes from `before` to `after`; top-level names in `ignore`
    (the sandbox's own mount points) are left out."""
    skipped = frozenset(ignore)

    def kept(path: str) -> bool:
        return path.split("/", 1)[0] not in skipped

    written = frozenset(p for p, r in after.items() if before.get(p) != r and kept(p))
    gone = {p for p in before if p not in after and kept(p)}
    removed = []
    for path in sorted(gone):
        parent = path.rpartition("/")[0]
        if parent in gone:
            continue  # the parent's whiteout removes it
        # A folder replaced by a file or link: the new entry replaces the whole tree.
        if parent and after.get(parent, (stat.S_IFDIR,))[0] != stat.S_IFDIR:
            continue
        removed.append(path)
    return Changes(written, tuple(removed))


def check(after: Snapshot, changes: Changes) -> None:
    """Refuse a change no layer may carry (see the module's docstring)."""
    for path in sorted(changes.written):
        kind, _, _, _, _, _, target = after[path]
        if kind not in _KINDS:
            raise Refused("unsafe_change", f"/{path} is a device node, fifo or socket")
        relative = kind == stat.S_IFLNK and not target.startswith("/")
        if relative and climbs_out(path.rpartition("/")[0], target):
            raise Refused("unsafe_change", f"/{path} -> {target} points outside the image")


def write_layer(rootfs: Path, changes: Changes, out: Path) -> tuple[str, int]:
    """Write the layer of `changes` (already `check`ed) to `out`; its sha256
    digest and size (the layer is not compressed, so its digest is also its
    diff id)."""
    with (
        out.open("wb") as handle,
        tarfile.open(fileobj=handle, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        # Only folders on the way to a change are walked into.
        above = {p.rsplit("/", n)[0] for p in changes.written for n in range(1, p.count("/") + 1)}
        for entry in walk(rootfs, max_depth=MAX_DEPTH, descend=above.__contains__):
            if entry.relative not in changes.written:
                continue
            info = _member(entry.relative, entry.info)
            if info.type == tarfile.SYMTYPE:
                info.linkname = os.readlink(entry.name, dir_fd=entry.parent_fd)
                tar.addfile(info)
            elif info.type == tarfile.REGTYPE:
                fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.parent_fd)
                with os.fdopen(fd, "rb") as data:
                    info.size = os.fstat(data.fileno()).st_size
                    tar.addfile(info, data)
            else:
                tar.addfile(info)
        for path in changes.removed:
            folder, _, name = path.rpartition("/")
            whiteout = f"{folder}/.wh.{name}" if folder else f".wh.{name}"
            tar.addfile(_member(whiteout, None))
    digest = hashlib.sha256()
    with out.open("rb") as written:
        while chunk := written.read(1 << 20):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest(), out.stat().st_size


def _member(name: str, info: os.stat_result | None) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.mtime = 0
    member.uid = member.gid = 0  # and no owner names: tarfile's default is ""
    if info is None:  # a whiteout: an empty regular file
        member.mode = 0o644
        return member
    member.type = _KINDS[stat.S_IFMT(info.st_mode)]
    member.mode = info.st_mode & 0o7777
    return member


__all__ = ["Changes", "Snapshot", "check", "diff", "snapshot", "write_layer"]
