"""Egress enforcement through ONE process-wide PEP 578 audit hook.

`sys.addaudithook` cannot be undone, so the hook is installed once, lazily,
and consults a context variable: outside a guarded call the variable is None
and the hook returns after one lookup (cheap when inactive). Inside
`guard(policy)` every `socket.getaddrinfo` and `socket.connect` (and
`socket.sendto`) names its host; a host outside the policy raises
`EgressDenied` in the caller and is remembered, so the step fails with
`egress_denied` naming the host even if the calling code swallowed the error.

Addresses: a connect names an IP; it is allowed when the IP is literally
allowed or was resolved (by this hook, with the policy switched off) from an
allowed host name. The same hook also refuses subprocesses and opening the
secrets file while a policy says so (transforms).

Context variables follow `asyncio` tasks and `asyncio.to_thread`; code that
starts its own threads outside those does not inherit the policy.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


class EgressDenied(PermissionError):
    def __init__(self, host: str, what: str = "network connection") -> None:
        super().__init__(f"egress denied: {what} to {host} is outside the trust contract hosts")
        self.host = host


@dataclass
class EgressPolicy:
    """What the guarded code may reach. `hosts` None means any host."""

    hosts: frozenset[str] | None
    allow_subprocess: bool = True
    forbidden_files: frozenset[str] = frozenset()
    contacted: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    _addresses: set[str] = field(default_factory=set)

    def host_allowed(self, host: str) -> bool:
        if self.hosts is None:
            return True
        host = host.lower().rstrip(".")
        return host in self.hosts or host in self._addresses

    def note(self, host: str) -> None:
        if host not in self.contacted:
            self.contacted.append(host)


_POLICY: contextvars.ContextVar[EgressPolicy | None] = contextvars.ContextVar(
    "flightdeck_egress_policy", default=None
)
_installed = False
_install_lock = threading.Lock()


def _host_of(event: str, args: tuple[Any, ...]) -> str | None:
    if event == "socket.getaddrinfo":
        host = args[0]
    else:  # socket.connect / socket.sendto: (socket, address)
        address = args[1]
        if not isinstance(address, tuple) or not address:
            return None  # AF_UNIX paths and the like are not network egress
        host = address[0]
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return str(host) if host is not None else None


def _learn_addresses(policy: EgressPolicy, host: str) -> None:
    token = _POLICY.set(None)  # resolve without re-entering the policy
    try:
        for info in socket.getaddrinfo(host, None):
            policy._addresses.add(str(info[4][0]))
    except OSError:
        pass
    finally:
        _POLICY.reset(token)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    policy = _POLICY.get()
    if policy is None:
        return
    if event in ("socket.getaddrinfo", "socket.connect", "socket.sendto"):
        host = _host_of(event, args)
        if host is None:
            return
        if policy.host_allowed(host):
            policy.note(host)
            if event == "socket.getaddrinfo" and not _is_ip(host) and policy.hosts is not None:
                _learn_addresses(policy, host)
            return
        policy.denied.append(host)
        raise EgressDenied(host)
    if event == "subprocess.Popen" and not policy.allow_subprocess:
        policy.denied.append(f"subprocess:{args[0]}")
        raise EgressDenied(str(args[0]), "a subprocess")
    if (
        event == "open"
        and policy.forbidden_files
        and args
        and str(args[0]) in policy.forbidden_files
    ):
        raise PermissionError(f"{args[0]} may not be read here")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def install() -> None:
    """Install the process-wide hook (idempotent)."""
    global _installed
    if _installed:
        return
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


@contextmanager
def guard(policy: EgressPolicy) -> Iterator[EgressPolicy]:
    """Run the body under `policy` (in this context and tasks/threads it spawns)."""
    install()
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)


def contract_policy(hosts: tuple[str, ...]) -> EgressPolicy:
    return EgressPolicy(hosts=frozenset(h.lower().rstrip(".") for h in hosts))


def deny_all(forbidden_files: frozenset[str] = frozenset()) -> EgressPolicy:
    """The policy of a transform: no network, no subprocess, no secrets file."""
    return EgressPolicy(hosts=frozenset(), allow_subprocess=False, forbidden_files=forbidden_files)
