"""Watching a driver package's import with a PEP 578 audit hook (AIP-33 security).

Audit hooks cannot be removed, so one process-wide hook is installed the
first time a driver package is imported, and it does nothing unless the
current context says "a driver import is being watched" (a `ContextVar`, so
only the importing thread and task are observed). While watching, it records
network connections and DNS lookups, subprocesses, and file writes; the
importer decides afterwards whether what happened was declared.

The hook records and never raises: raising inside an import would leave a
half-initialised module behind. The driver is refused instead.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(frozen=True)
class Observed:
    """One thing the package did while it was imported."""

    kind: str  # network, dns, subprocess, file_write
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


@dataclass
class Watch:
    observed: list[Observed] = field(default_factory=list)


_current: ContextVar[Watch | None] = ContextVar("flightdeck_driver_import_watch", default=None)
_installed = False
_install_lock = threading.Lock()


def _is_bytecode(path: Any) -> bool:
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
    return "__pycache__" in text or text.endswith((".pyc", ".pyc.tmp")) or ".pyc." in text


def _open_writes(args: tuple[Any, ...]) -> bool:
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _address(value: Any) -> str:
    if isinstance(value, tuple) and len(value) >= 2:
        return f"{value[0]}:{value[1]}"
    return str(value)


def _classify(event: str, args: tuple[Any, ...]) -> Observed | None:
    if event == "socket.connect":
        return Observed("network", f"connect to {_address(args[1] if len(args) > 1 else '')}")
    if event == "socket.getaddrinfo":
        return Observed("dns", f"lookup of {args[0] if args else ''}")
    if event in _PROCESS_EVENTS or event.startswith("os.exec"):
        return Observed("subprocess", f"{event} {str(args[0])[:120] if args else ''}".strip())
    if event == "open" and args and _open_writes(args) and not _is_bytecode(args[0]):
        return Observed("file_write", f"open {os.fsdecode(args[0])} for writing")
    if event in _FS_EVENTS and args and not _is_bytecode(args[0]):
        return Observed("file_write", f"{event} {os.fsdecode(args[0])}")
    return None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    watch = _current.get()
    if watch is None:  # the common case: one ContextVar read
        return
    found = _classify(event, args)
    if found is not None:
        watch.observed.append(found)


def _install() -> None:
    global _installed
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


@contextmanager
def watching() -> Iterator[Watch]:
    """Record what the code run inside the block does (this context only)."""
    _install()
    watch = Watch()
    token = _current.set(watch)
    try:
        yield watch
    finally:
        _current.reset(token)


def undeclared(observed: list[Observed], egress: list[str]) -> list[Observed]:
    """What the import did that the manifest did not declare.

    Network use needs `network.egress`; a DNS lookup must name a declared host
    (`*.example.com` matches subdomains). Subprocesses and file writes are never
    declared for an SDK driver: importing must be side-effect free.
    """
    out: list[Observed] = []
    for item in observed:
        if item.kind == "network" and egress:
            continue
        if item.kind == "dns" and egress:
            host = item.detail.removeprefix("lookup of ")
            if any(_host_matches(host, allowed) for allowed in egress):
                continue
        out.append(item)
    return out


def _host_matches(host: str, allowed: str) -> bool:
    if allowed.startswith("*."):
        return host.endswith(allowed[1:])
    return host == allowed
