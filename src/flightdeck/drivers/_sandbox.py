"""A PEP 578 audit hook for driver imports and calls (AIP-33 security, AIP-30 egress).

Audit hooks cannot be removed, so one process-wide hook is installed the
first time a driver is imported, and it does nothing unless the current
context (a `ContextVar`: only the importing/calling thread and task, and
threads started with a copied context such as `asyncio.to_thread`) is in one of
two states:

- watching an import: network connections and DNS lookups, subprocesses and
  file writes are recorded; the importer decides afterwards whether they were
  declared. Nothing is raised: that would leave a half-initialised module.
- guarding a call: a connection or lookup the driver's `network.egress` does
  not allow raises `EgressDenied` inside the package (fail closed). With no
  egress declared every connection is refused; with egress declared, host
  names looked up must match it (IP literals pass, they cannot be attributed
  to a host without resolving). Denials are also recorded, so the driver
  reports `egress_denied` however the package wrapped the error.
"""

from __future__ import annotations

import ipaddress
import os
import socket
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


@dataclass
class Guard:
    """Egress policy of one driver call; `denied` lists what was refused."""

    driver: str
    egress: tuple[str, ...]
    denied: list[str] = field(default_factory=list)


class EgressDenied(PermissionError):
    """Raised inside the package when a call reaches outside `network.egress`."""


_current: ContextVar[Watch | Guard | None] = ContextVar("flightdeck_driver_watch", default=None)
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


def _is_ip(host: Any) -> bool:
    try:
        ipaddress.ip_address(str(host))
    except ValueError:
        return False
    return True


def _guard(guard: Guard, event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        sock = args[0] if args else None
        if getattr(sock, "family", None) not in (socket.AF_INET, socket.AF_INET6):
            return  # unix sockets and socketpairs are local IPC
        if guard.egress:
            return
        what = f"connect to {_address(args[1] if len(args) > 1 else '')}"
    elif event == "socket.getaddrinfo":
        host = args[0] if args else ""
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if guard.egress and (
            _is_ip(host) or any(_host_matches(str(host), a) for a in guard.egress)
        ):
            return
        what = f"lookup of {host}"
    else:
        return
    guard.denied.append(what)
    allowed = ", ".join(guard.egress) or "none declared"
    raise EgressDenied(f"driver {guard.driver}: {what} is outside network.egress ({allowed})")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    state = _current.get()
    if state is None:  # the common case: one ContextVar read
        return
    if isinstance(state, Guard):
        _guard(state, event, args)
        return
    found = _classify(event, args)
    if found is not None:
        state.observed.append(found)


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


def guard(driver: str, egress: tuple[str, ...]) -> tuple[Guard, Any]:
    """Start guarding this context; returns the guard and the token for `unguard`."""
    _install()
    state = Guard(driver, egress)
    return state, _current.set(state)


def set_guard(state: Guard) -> Any:
    """Re-enter an existing guard (each step of a stream); returns the token."""
    return _current.set(state)


def unguard(token: Any) -> None:
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
