"""A root filesystem being unpacked, changed only through directory descriptors.

Every name a layer gives is looked up one component at a time, each opened
relative to the directory before it with `O_NOFOLLOW`, starting from the
rootfs's own descriptor: what is checked is what is written, and no string
path is ever handed to the kernel, so neither Python's `realpath` (which
stops resolving past PATH_MAX before 3.11.13) nor the length of a path
matters. On the way to an entry:

- `..` in a member's name is resolved lexically and may not climb above
  the root;
- a relative link a lower layer left is followed (`lib -> usr/lib`), one
  component at a time by the same rules; its `..` may not climb above the
  root either;
- an absolute link (`/etc/alternatives/x`, or `/` itself) is never gone
  through: the host would resolve it from the host's root, so a member,
  whiteout or hard link whose path passes through one is refused. Absolute
  links are still created: the sandbox resolves them from the image's root.

Looked-up folders are kept open (a bounded cache keyed by their path inside
the rootfs, forgotten when anything on that path is removed), so a layer
costs one lookup step per new component, not per component of every name.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import OrderedDict

from flightdeck.launch.image._fdtree import DIR_FLAGS, empty_dir, remove_at

MAX_DEPTH = 128  # folders below the root
MAX_NAME = 4096  # bytes of a member's name or a link's target (PATH_MAX)
MAX_LINKS = 40  # links followed in one lookup (the kernel's own limit)
MAX_STEPS = 512  # components walked in one lookup, links' targets included
_OPEN_DIRS = 256
_MEMO = 1 << 16
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """A layer refused: `code` is the `image.*` suffix (`unsafe_layer`,
    `too_large`, `pull_timeout`), `reason` says what and where."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


def clean(name: str) -> list[str]:
    """A member's name as components below the root: leading `/` dropped,
    `.` and empty parts skipped, `..` resolved lexically (never above)."""
    if "\0" in name or len(os.fsencode(name)) > MAX_NAME:
        raise Refused("unsafe_layer", f"{name[:80]!r}... is not a usable path")
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise Refused("unsafe_layer", f"{name} climbs above the image root")
            parts.pop()
        else:
            parts.append(part)
    return parts


class Rootfs:
    """The rootfs being written; close it when done."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        self.root = os.open(path, DIR_FLAGS)
        self._dirs: OrderedDict[str, int] = OrderedDict()  # physical path -> open fd
        self._links: dict[str, str] = {}  # physical path of a link -> its target
        self._memo: dict[str, str] = {}  # a name's folder as written -> physical path

    def close(self) -> None:
        self._forget("")
        os.close(self.root)

    # -- lookups ------------------------------------------------------------

    def folder(self, parts: list[str], *, create: bool) -> tuple[int, str] | None:
        """The open folder `parts` names (links followed as the module says)
        and its physical path; None when missing and not `create`. The
        descriptor is the cache's: valid until the next lookup."""
        key = "/".join(parts)
        physical = self._memo.get(key)
        if physical is not None:
            fd = self._dirs.get(physical)
            if fd is not None:
                self._dirs.move_to_end(physical)
                return fd, physical
        found = self._walk(parts, key, create)
        if found is not None:
            if len(self._memo) >= _MEMO:
                self._memo.clear()
            self._memo[key] = found[1]
        return found

    def _walk(self, parts: list[str], key: str, create: bool) -> tuple[int, str] | None:
        stack: list[str] = []
        pending = list(reversed(parts))
        fd, path, links, steps = self.root, "", 0, 0
        while pending:
            name = pending.pop()
            steps += 1
            if steps > MAX_STEPS:
                raise Refused("too_large", f"{key}: more than {MAX_STEPS} steps to look up")
            if name in ("", "."):
                continue
            if name == "..":
                if not stack:
                    raise Refused(
                        "unsafe_layer", f"{key} leads above the image root through a link"
                    )
                stack.pop()
                path = "/".join(stack)
                fd = self._reopen(path)
                continue
            if len(stack) >= MAX_DEPTH:
                raise Refused("too_large", f"{key} is nested deeper than {MAX_DEPTH} folders")
            child = f"{path}/{name}" if path else name
            target = self._links.get(child)
            if target is None:
                opened = self._open_child(fd, name, child, create)
                if opened is None:
                    return None
                if isinstance(opened, int):
                    stack.append(name)
                    fd, path = opened, child
                    continue
                target = opened
            links += 1
            if links > MAX_LINKS:
                raise Refused("unsafe_layer", f"{key}: more than {MAX_LINKS} links to follow")
            if target.startswith("/"):
                raise Refused(
                    "unsafe_layer",
                    f"{key} passes through the absolute link {child} -> {target}"
                    " (the host would resolve it outside the image)",
                )
            pending.extend(reversed(target.split("/")))
        return fd, path

    def _open_child(self, fd: int, name: str, child: str, create: bool) -> int | str | None:
        """The folder's descriptor, a link's target, or None (missing)."""
        cached = self._dirs.get(child)
        if cached is not None:
            self._dirs.move_to_end(child)
            return cached
        try:
            opened = os.open(name, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(name, 0o700, dir_fd=fd)
            opened = os.open(name, DIR_FLAGS, dir_fd=fd)
            os.fchmod(opened, 0o755)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISLNK(info.st_mode):
                raise Refused("unsafe_layer", f"{child} is not a folder") from None
            target = os.readlink(name, dir_fd=fd)
            self._links[child] = target
            return target
        self._keep(child, opened)
        return opened

    def _keep(self, path: str, fd: int) -> None:
        self._dirs[path] = fd
        if len(self._dirs) > _OPEN_DIRS:
            os.close(self._dirs.popitem(last=False)[1])

    def _reopen(self, path: str) -> int:
        """A folder already walked once, by its physical path."""
        if not path:
            return self.root
        fd = self.root
        walked = ""
        for name in path.split("/"):
            walked = f"{walked}/{name}" if walked else name
            opened = self._dirs.get(walked)
            if opened is None:
                opened = os.open(name, DIR_FLAGS, dir_fd=fd)
                self._keep(walked, opened)
            fd = opened
        return fd

    def _forget(self, physical: str) -> None:
        """Something at `physical` was removed or replaced ("" is everything)."""
        self._memo.clear()
        self._links.clear()
        prefix = physical + "/"
        for path in [
            p for p in self._dirs if not physical or p == physical or p.startswith(prefix)
        ]:
            os.close(self._dirs.pop(path))

    # -- changes ------------------------------------------------------------

    def _clear(self, fd: int, physical: str, name: str, *, keep_dir: bool) -> bool:
        """Remove what is at `name` (a directory is kept when `keep_dir`);
        whether a directory is there now."""
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        path = f"{physical}/{name}" if physical else name
        if stat.S_ISDIR(info.st_mode):
            if keep_dir:
                return True
            self._forget(path)
            remove_at(fd, name)
        else:
            if stat.S_ISLNK(info.st_mode):
                self._forget(path)
            os.unlink(name, dir_fd=fd)
        return False

    def put_dir(self, parts: list[str]) -> None:
        if not parts:
            return  # the root itself
        fd, physical = self._parent(parts)
        if self._clear(fd, physical, parts[-1], keep_dir=True):
            return
        if _depth(physical) + 1 > MAX_DEPTH:
            raise Refused(
                "too_large", f"{'/'.join(parts)} is nested deeper than {MAX_DEPTH} folders"
            )
        os.mkdir(parts[-1], 0o700, dir_fd=fd)
        opened = os.open(parts[-1], DIR_FLAGS, dir_fd=fd)
        os.fchmod(opened, 0o755)
        self._keep(f"{physical}/{parts[-1]}" if physical else parts[-1], opened)

    def new_file(self, parts: list[str]) -> int:
        """A new, empty regular file in place of whatever was there; its
        descriptor, open for writing (the caller closes it)."""
        fd, physical = self._parent(parts)
        self._clear(fd, physical, parts[-1], keep_dir=False)
        return os.open(parts[-1], _NEW_FILE, 0o600, dir_fd=fd)

    def put_symlink(self, parts: list[str], target: str) -> None:
        if not target or "\0" in target or len(os.fsencode(target)) >= MAX_NAME:
            raise Refused(
                "unsafe_layer", f"{'/'.join(parts)}: the link target is not a usable path"
            )
        fd, physical = self._parent(parts)
        if not target.startswith("/") and climbs_out(physical, target):
            raise Refused("unsafe_layer", f"{'/'.join(parts)} -> {target} points outside the image")
        self._clear(fd, physical, parts[-1], keep_dir=False)
        os.symlink(target, parts[-1], dir_fd=fd)

    def put_hardlink(self, parts: list[str], target: str) -> None:
        """A hard link to a regular file or a link already in the rootfs
        (never followed: linking a link links the link itself)."""
        shown = "/".join(parts)
        if target.startswith("/"):
            raise Refused("unsafe_layer", f"{shown} is a hard link to the absolute path {target}")
        wanted = clean(target)
        found = self.folder(wanted[:-1], create=False) if wanted else None
        if found is None:
            raise Refused("unsafe_layer", f"{shown} is a hard link to {target}, which is not there")
        source = os.dup(found[0])
        try:
            try:
                info = os.stat(wanted[-1], dir_fd=source, follow_symlinks=False)
            except FileNotFoundError:
                raise Refused(
                    "unsafe_layer", f"{shown} is a hard link to {target}, which is not there"
                ) from None
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                raise Refused("unsafe_layer", f"{shown} is a hard link to {target}, not a file")
            fd, physical = self._parent(parts)
            try:
                here = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
                if (here.st_dev, here.st_ino) == (info.st_dev, info.st_ino):
                    return  # already that file
            except FileNotFoundError:
                pass
            self._clear(fd, physical, parts[-1], keep_dir=False)
            os.link(wanted[-1], parts[-1], src_dir_fd=source, dst_dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(source)

    def whiteout(self, folder: list[str], name: str) -> None:
        """`.wh.<name>`: remove `name` of a lower layer, if there."""
        if name in ("", ".", "..") or "/" in name:
            raise Refused("unsafe_layer", f"{'/'.join(folder)}/.wh.{name} names no entry")
        found = self.folder(folder, create=False)
        if found is not None:
            self._clear(found[0], found[1], name, keep_dir=False)

    def opaque(self, folder: list[str]) -> None:
        """`.wh..wh..opq`: empty a lower layer's directory (not a link to one)."""
        if not folder:
            self._forget("")
            empty_dir(self.root)
            return
        found = self.folder(folder[:-1], create=False)
        if found is None:
            return
        fd, physical = found
        try:
            opened = os.open(folder[-1], DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                return  # nothing there, or not a directory of its own
            raise
        try:
            self._forget(f"{physical}/{folder[-1]}" if physical else folder[-1])
            empty_dir(opened)
        finally:
            os.close(opened)

    def _parent(self, parts: list[str]) -> tuple[int, str]:
        if not parts:
            raise Refused("unsafe_layer", "an entry names the image root itself")
        found = self.folder(parts[:-1], create=True)
        assert found is not None  # created when missing
        return found


def _depth(physical: str) -> int:
    return physical.count("/") + 1 if physical else 0


def climbs_out(physical: str, target: str) -> bool:
    """Whether a relative link in the folder `physical` climbs above the
    root, judged where the link really is (lexically, as the old tarfile
    `data` filter judged it, but without asking `realpath`)."""
    depth = _depth(physical)
    for part in target.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


__all__ = ["MAX_DEPTH", "MAX_NAME", "Refused", "Rootfs", "clean", "climbs_out"]
