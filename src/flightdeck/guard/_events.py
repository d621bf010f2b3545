"""Audit events worth guarding, reduced to one small value (`Event`).

`classify` is the only place that knows the shape of CPython's audit event
arguments; policies only see `Event`s. File events also carry `FileAccess`es
(every path the call touches, made absolute), which a `FileScope` judges.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qs, urlsplit

# kinds: dns (a name lookup), network (connect/sendto on an IP socket),
# subprocess, file_write (open for writing, remove, rename, mkdir, chmod...),
# file_read (any other open, a directory listing; only forbidden files and a
# file scope care about it), bytecode (the import system's __pycache__ traffic:
# only a file scope judges it)
_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_INET = (socket.AF_INET, socket.AF_INET6)

# path-taking audit events (CPython 3.11+), by the position of each path argument
# and of the dir_fd it is relative to (None: the event carries none).
# (path index, dir_fd index, follows a final symlink)
_Spot = tuple[int, int | None, bool]
_WRITE_EVENTS: dict[str, tuple[_Spot, ...]] = {
    "os.remove": ((0, 1, False),),
    "os.rmdir": ((0, 1, False),),
    "os.mkdir": ((0, 2, False),),
    "os.rename": ((0, 2, False), (1, 3, False)),  # also os.replace
    "shutil.rmtree": ((0, 1, False),),
    "os.symlink": ((1, 2, False),),  # the link is written; its text is not opened
    "os.link": ((0, 2, True), (1, 3, False)),  # a hard link shares the source's inode
    "os.chmod": ((0, 2, True),),
    "os.chown": ((0, 3, True),),
    "os.utime": ((0, 3, True),),
    "os.truncate": ((0, None, True),),
    "os.setxattr": ((0, None, True),),
    "os.removexattr": ((0, None, True),),
    "os.chflags": ((0, None, True),),
    "os.lchflags": ((0, None, False),),
}
_READ_EVENTS: dict[str, tuple[_Spot, ...]] = {
    "os.listdir": ((0, None, True),),
    "os.scandir": ((0, None, True),),
    "os.fwalk": ((0, 4, True),),
    "os.getxattr": ((0, None, True),),
    "os.listxattr": ((0, None, True),),
}
# the events older policies already judged: their Event.path stays the raw first argument
_FS_EVENTS = frozenset({"os.remove", "os.rename", "os.mkdir", "os.rmdir", "shutil.rmtree"})


@dataclass(frozen=True)
class FileAccess:
    """One path an audited call touches.

    `path` is absolute: relative paths are joined to their `dir_fd`'s directory
    (named through /proc/self/fd) or to the current directory; None when it
    cannot be known. `follow` is False for calls that act on a final symlink
    itself (remove, rename, mkdir, symlink), so only its parent is resolved.
    """

    operation: str  # the audit event: open, os.remove, os.listdir, sqlite3.connect...
    path: str | None
    write: bool
    follow: bool = True

    @cached_property
    def resolved(self) -> str | None:
        """The real path judged: symlinks and `..` resolved (once, then kept)."""
        if self.path is None:
            return None
        try:
            head, tail = os.path.split(self.path)
            if self.follow or tail in ("", ".", ".."):
                return os.path.realpath(self.path)
            return os.path.join(os.path.realpath(head), tail)
        except (OSError, ValueError):  # NUL bytes, a vanished cwd: unknowable
            return None

    def to_dict(self) -> dict[str, str | None]:
        access = "write" if self.write else "read"
        return {"operation": self.operation, "access": access, "path": self.path}


@dataclass(frozen=True)
class Event:
    """One guarded thing the code did: `detail` says it in words, `host`/`path` name it."""

    kind: str
    detail: str
    host: str | None = None
    path: str | None = None
    files: tuple[FileAccess, ...] = ()

    @property
    def target(self) -> str:
        """The host, else the path, else the detail (for one-word messages)."""
        return self.host or self.path or self.detail

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("ascii", "replace")
    return None if value is None else str(value)


def _path(value: Any) -> str | None:
    """A file system path, or None for file descriptors and the like."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    return None


def _absolute(path: str, dir_fd: Any) -> str | None:
    """`path` made absolute the way the call resolves it; None when unknowable."""
    if os.path.isabs(path):
        return path
    try:
        if isinstance(dir_fd, int) and dir_fd >= 0:
            return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        return os.path.abspath(path)
    except OSError:  # no /proc, a closed fd, a removed cwd
        return None


def _is_bytecode(path: str) -> bool:
    # the import system writes .pyc files: not the package's doing
    return "__pycache__" in path or path.endswith((".pyc", ".pyc.tmp")) or ".pyc." in path


def _open_writes(args: tuple[Any, ...]) -> bool:
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _socket_event(event: str, args: tuple[Any, ...]) -> Event | None:
    sock, address = (args[0], args[1]) if len(args) > 1 else (None, None)
    if getattr(sock, "family", None) not in _INET or not isinstance(address, tuple):
        return None  # unix sockets and socketpairs are local IPC, not egress
    host = _text(address[0]) if address else None
    if not host:
        return None
    port = address[1] if len(address) > 1 else ""
    verb = "connect to" if event == "socket.connect" else "send to"
    return Event("network", f"{verb} {host}:{port}", host=host)


def _accesses(
    event: str, args: tuple[Any, ...], spots: tuple[_Spot, ...], write: bool
) -> tuple[FileAccess, ...]:
    found = []
    for index, fd_index, follow in spots:
        raw = args[index] if len(args) > index else None
        if raw is None and event in ("os.listdir", "os.scandir"):
            raw = "."  # no argument lists the current directory
        path = _path(raw)
        if path is None:
            continue  # a file descriptor: its opening was judged already
        dir_fd = args[fd_index] if fd_index is not None and len(args) > fd_index else None
        found.append(FileAccess(event, _absolute(path, dir_fd), write, follow))
    return tuple(found)


def _open_event(args: tuple[Any, ...]) -> Event | None:
    path = _path(args[0]) if args else None
    if path is None:
        return None
    # CPython's open event drops os.open's dir_fd: a relative path is judged
    # against the current directory (fails closed for dir_fd-relative opens)
    writes = _open_writes(args)
    access = (FileAccess("open", _absolute(path, None), writes),)
    if _is_bytecode(path):
        return Event("bytecode", f"open {path}", path=path, files=access)
    if writes:
        return Event("file_write", f"open {path} for writing", path=path, files=access)
    return Event("file_read", f"open {path}", path=path, files=access)


def _fs_event(event: str, args: tuple[Any, ...]) -> Event | None:
    write = event in _WRITE_EVENTS
    spots = _WRITE_EVENTS[event] if write else _READ_EVENTS[event]
    files = _accesses(event, args, spots, write)
    if not files:
        return None
    raw = _path(args[0]) if args else None
    shown = raw if raw is not None else "."
    if event in ("os.symlink", "os.link") and len(args) > 1:
        shown = f"{shown} -> {_path(args[1])}"  # the second path is the one written
    path = raw if event in _FS_EVENTS else files[0].path
    if raw is not None and _is_bytecode(raw):
        return Event("bytecode", f"{event} {shown}", path=path, files=files)
    return Event("file_write" if write else "file_read", f"{event} {shown}", path=path, files=files)


def _sqlite_event(args: tuple[Any, ...]) -> Event | None:
    # sqlite opens its database in C, without an open event
    name = _path(args[0]) if args else None
    if name is None or name in ("", ":memory:"):
        return None
    if name.startswith("file:"):
        parts = urlsplit(name)
        if parse_qs(parts.query).get("mode") == ["memory"] or not parts.path:
            return None
        name = parts.path
    access = (FileAccess("sqlite3.connect", _absolute(name, None), True),)
    return Event("file_write", f"sqlite3.connect {name}", path=name, files=access)


def classify(event: str, args: tuple[Any, ...]) -> Event | None:
    """The `Event` for a raw audit event, or None when no policy cares about it."""
    if event == "open":
        return _open_event(args)
    if event in _WRITE_EVENTS or event in _READ_EVENTS:
        return _fs_event(event, args)
    if event == "socket.getaddrinfo":
        host = _text(args[0]) if args else None
        return Event("dns", f"lookup of {host}", host=host) if host else None
    if event in ("socket.connect", "socket.sendto"):
        return _socket_event(event, args)
    if event in _PROCESS_EVENTS or event.startswith("os.exec"):
        what = str(args[0])[:120] if args else ""
        return Event("subprocess", f"{event} {what}".strip(), path=what or None)
    if event == "sqlite3.connect":
        return _sqlite_event(args)
    return None
