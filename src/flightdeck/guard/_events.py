"""Audit events worth guarding, reduced to one small value (`Event`).

`classify` is the only place that knows the shape of CPython's audit event
arguments; policies only see `Event`s.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

# kinds: dns (a name lookup), network (connect/sendto on an IP socket),
# subprocess, file_write (open for writing, remove, rename, mkdir...),
# file_read (any other open; only forbidden files care about it)
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
_FS_EVENTS = frozenset({"os.remove", "os.rename", "os.mkdir", "os.rmdir", "shutil.rmtree"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_INET = (socket.AF_INET, socket.AF_INET6)


@dataclass(frozen=True)
class Event:
    """One guarded thing the code did: `detail` says it in words, `host`/`path` name it."""

    kind: str
    detail: str
    host: str | None = None
    path: str | None = None

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


def _file_event(event: str, args: tuple[Any, ...]) -> Event | None:
    path = _path(args[0]) if args else None
    if path is None or _is_bytecode(path):
        return None
    if event != "open":
        return Event("file_write", f"{event} {path}", path=path)
    if _open_writes(args):
        return Event("file_write", f"open {path} for writing", path=path)
    return Event("file_read", f"open {path}", path=path)


def classify(event: str, args: tuple[Any, ...]) -> Event | None:
    """The `Event` for a raw audit event, or None when no policy cares about it."""
    if event == "open" or event in _FS_EVENTS:
        return _file_event(event, args)
    if event == "socket.getaddrinfo":
        host = _text(args[0]) if args else None
        return Event("dns", f"lookup of {host}", host=host) if host else None
    if event in ("socket.connect", "socket.sendto"):
        return _socket_event(event, args)
    if event in _PROCESS_EVENTS or event.startswith("os.exec"):
        what = str(args[0])[:120] if args else ""
        return Event("subprocess", f"{event} {what}".strip(), path=what or None)
    return None
