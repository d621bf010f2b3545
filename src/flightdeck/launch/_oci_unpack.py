"""Unpacking verified layers into a root filesystem that cannot reach out of itself.

Layers apply in manifest order. In each, whiteouts act on the layers below
first (`.wh.<name>` deletes `<name>`, `.wh..wh..opq` empties its directory),
then the other members are extracted with Python's tarfile `data` filter
(no absolute paths, nothing resolving outside the rootfs through `..` or a
symlink a lower layer left, no links pointing out, setuid/setgid/sticky and
group/other write bits cleared, owners not applied) wrapped so that device
nodes and fifos are dropped (listed) rather than failing the image.
`tree_digest` hashes the result so a cached rootfs can be re-verified.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import stat
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from flightdeck.launch._errors import LaunchError

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"


def unpack(layers: list[tuple[Path, str]], rootfs: Path) -> list[str]:
    """Apply `(verified blob file, compression)` layers in order, read from
    disk as they stream; the dropped members."""
    rootfs.mkdir(parents=True, exist_ok=True)
    dropped: list[str] = []
    for number, (blob, compression) in enumerate(layers):
        try:
            with tarfile.open(blob, mode="r:gz" if compression == "gz" else "r:") as tar:
                members = tar.getmembers()
                kept = _whiteouts(members, rootfs)
                for member in kept:
                    if member.isdev() or member.isfifo():
                        dropped.append(member.name)
                        continue
                    _clear_path(rootfs, member)
                    tar.extract(member, rootfs, filter=_data_filter)
        # RecursionError: a link whose target resolves to itself sends tarfile's
        # copy-instead-of-link fallback round in circles (found by the fuzz test).
        except (tarfile.TarError, OSError, EOFError, zlib.error, RecursionError) as exc:
            raise LaunchError(
                "image.unsafe_layer",
                f"layer {number + 1} cannot be unpacked safely: {exc}",
                hint="the image's layers name paths or links outside its root filesystem",
            ) from None
    return dropped


def _data_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter, except that an absolute symlink is judged as
    the sandbox will resolve it, from the image's root: images are full of
    them (`/etc/alternatives/...`). The link is still created pointing at the
    absolute target; nothing on the host side follows it, since every later
    member and whiteout is checked by resolving its parent inside the rootfs."""
    if member.issym() and member.linkname.startswith("/"):
        folder = posixpath.dirname("/" + member.name.lstrip("/"))
        relative = posixpath.relpath(posixpath.normpath(member.linkname), folder)
        checked = tarfile.data_filter(member.replace(linkname=relative), dest)
        return checked.replace(linkname=member.linkname) if checked is not None else None
    return tarfile.data_filter(member, dest)


def _whiteouts(members: list[tarfile.TarInfo], rootfs: Path) -> list[tarfile.TarInfo]:
    """Apply this layer's whiteouts to the lower layers; the other members."""
    kept: list[tarfile.TarInfo] = []
    for member in members:
        path = PurePosixPath(member.name)
        if path.name == OPAQUE:
            folder = _inside(rootfs, path.parent)
            if folder.is_dir() and not folder.is_symlink():
                for child in folder.iterdir():
                    _remove(child)
        elif path.name.startswith(WHITEOUT):
            _remove(_inside(rootfs, path.parent / path.name[len(WHITEOUT) :]))
        else:
            kept.append(member)
    return kept


def _inside(rootfs: Path, relative: PurePosixPath) -> Path:
    """`rootfs/relative`, refusing anything whose parent resolves outside."""
    parts = [p for p in relative.parts if p not in ("", ".", "/")]
    if ".." in parts or relative.is_absolute():
        raise tarfile.OutsideDestinationError(tarfile.TarInfo(str(relative)), str(relative))
    target = rootfs.joinpath(*parts)
    parent = os.path.realpath(target.parent)
    root = os.path.realpath(rootfs)
    if parent != root and not parent.startswith(root + os.sep):
        raise tarfile.OutsideDestinationError(tarfile.TarInfo(str(relative)), str(relative))
    return target


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()


def _clear_path(rootfs: Path, member: tarfile.TarInfo) -> None:
    """An upper layer replaces what is there: a file or link over a directory
    or the other way round (tarfile would otherwise fail or write through a
    symlink); a directory over a directory merges."""
    target = _inside(rootfs, PurePosixPath(member.name))
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink()
    elif target.is_dir() and not member.isdir():
        shutil.rmtree(target)


def tree_digest(rootfs: Path) -> str:
    """sha256 over every entry's path, type, permission bits and content
    (link target for symlinks), in sorted order."""
    digest = hashlib.sha256()
    for folder, dirs, names in os.walk(rootfs, followlinks=False):
        dirs.sort()
        for name in sorted([*dirs, *names]):
            path = Path(folder, name)
            info = os.lstat(path)
            relative = path.relative_to(rootfs).as_posix()
            kind, bits = stat.S_IFMT(info.st_mode), info.st_mode & 0o7777
            digest.update(f"{relative}\0{kind}\0{bits}\0".encode())
            if stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(path).encode())
            elif stat.S_ISREG(info.st_mode):
                with path.open("rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
            digest.update(b"\0\0")
    return "sha256:" + digest.hexdigest()


__all__ = ["tree_digest", "unpack"]
