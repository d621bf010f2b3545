"""`Policy`: one layer of the guard, and `Refused`, what a refusal raises."""

from __future__ import annotations

import functools
import ipaddress
import os
from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from flightdeck.guard._events import Event
from flightdeck.guard._scope import FileScope, StrPath

Resolver = Callable[[str], set[str]]


# Every transform step's policy names the same secrets file: normalising it
# was a fifth of a transform's cost. Keyed by the directory relative names
# are taken from ("" when all are absolute), since that decides what they mean.
@functools.lru_cache(maxsize=256)
def _absolute(files: frozenset[str], cwd: str) -> frozenset[str]:
    return frozenset(os.path.normpath(os.path.join(cwd, f)) for f in files)


# A pure function of the text, asked for per action call (its contract's hosts)
# and per connection checked; a host name costs two failed IP parses (~3 µs).
@functools.lru_cache(maxsize=1024)
def normal_host(host: str) -> str:
    """Lower case, no trailing dot, IP addresses in their canonical spelling."""
    host = host.strip().lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


@functools.lru_cache(maxsize=1024)
def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_matches(host: str, pattern: str) -> bool:
    """`pattern` is a host name, an IP address, or `*.example.com` (subdomains only)."""
    host, pattern = normal_host(host), normal_host(pattern)
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


class Refused(PermissionError):
    """Raised inside guarded code when a layer refuses an event (fail closed).

    The refusing layer also remembers the event in `Policy.denied`, so the
    caller can fail however the guarded code handled the error.
    """

    def __init__(self, message: str, event: Event, policy: Policy) -> None:
        super().__init__(message)
        self.event = event
        self.policy = policy
        self.host = event.target


@dataclass(eq=False)
class Policy:
    """What the code inside one guard layer may do, and what it did.

    `hosts` None leaves the network alone; a set allows only lookups of
    matching names and connections to matching IPs or to addresses that an
    allowed name resolved to. With `names_only` (a driver's `network.egress`,
    AIP-30) only names are checked: any IP passes while some host is allowed.
    `owner` and `limit` word the refusal: "{owner}: {event} is outside {limit}".
    With `record`, every event except plain reads is kept in `observed`.
    A `scope` confines files: every path an event touches must lie in it
    (see `confine_files`); events without paths are left to the other fields.
    """

    owner: str = "guard"
    limit: str = "the active guard"
    hosts: frozenset[str] | None = None
    subprocess: bool = True
    writes: bool = True
    files: frozenset[str] = frozenset()  # may not be opened at all
    record: bool = False
    names_only: bool = False  # any IP passes while `hosts` is non-empty: names are checked
    scope: FileScope | None = None  # None: files anywhere (subject to `writes`, `files`)
    observed: list[Event] = field(default_factory=list)
    contacted: list[str] = field(default_factory=list)
    denied: list[Event] = field(default_factory=list)
    addresses: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.hosts is not None:
            self.hosts = frozenset(normal_host(h) for h in self.hosts)
        if self.files:
            relative = not all(os.path.isabs(f) for f in self.files)
            self.files = _absolute(self.files, os.getcwd() if relative else "")

    @classmethod
    def watch(cls) -> Policy:
        """Record what the code does; refuse nothing."""
        return cls(owner="watch", record=True)

    @classmethod
    def allow_hosts(
        cls, hosts: Iterable[str], *, owner: str, limit: str, names_only: bool = False
    ) -> Policy:
        """Network only to `hosts` (exact names, IPs, `*.domain`); the rest untouched."""
        return cls(owner=owner, limit=limit, hosts=frozenset(hosts), names_only=names_only)

    def fresh(self) -> Policy:
        """The same rules with nothing recorded yet: a per-call layer stamped from one
        built once (about 0.6 us where the constructor, normalising again, takes 1.1)."""
        state = self.__dict__.copy()
        for name, factory in _RECORDS:
            state[name] = factory()
        new = object.__new__(type(self))
        new.__dict__ = state
        return new

    def stamper(self) -> Callable[[], Policy]:
        """A maker of per-call layers with this policy's rules as they are now.

        The rules are copied once, here; a layer gets its records (`observed`,
        `denied`...) only when the hook first writes or someone reads them, so a
        call that touches nothing guarded allocates one object and one dict
        (~0.3 us against `fresh`'s ~0.7). Later changes to this policy are not
        seen by the layers: build a new stamper then."""
        rules = {k: v for k, v in self.__dict__.items() if k not in _FACTORIES}
        cls = type(self)
        new = object.__new__

        def stamp() -> Policy:
            layer = new(cls)
            layer.__dict__.update(rules)
            return layer

        return stamp

    if not TYPE_CHECKING:  # typed as the fields they are; a typo elsewhere stays an error

        def __getattr__(self, name: str) -> Any:
            # Reached only for a name missing from the instance: a stamped layer's
            # record, made on first use. `setdefault` is one atomic step, so two
            # threads carrying the layer cannot each keep a list of their own.
            factory = _FACTORIES.get(name)
            if factory is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            return self.__dict__.setdefault(name, factory())

    def refused_any(self) -> bool:
        """Whether this layer refused an event yet (a stamped layer's records stay unmade)."""
        return bool(self.__dict__.get("denied"))

    @classmethod
    def deny_all(cls, files: Iterable[str] = (), *, owner: str, limit: str) -> Policy:
        """No network, no subprocess, and none of `files` opened."""
        return cls(
            owner=owner, limit=limit, hosts=frozenset(), subprocess=False, files=frozenset(files)
        )

    @classmethod
    def confine_files(
        cls,
        roots_rw: Iterable[StrPath],
        roots_ro: Iterable[StrPath] = (),
        *,
        owner: str,
        limit: str,
        interpreter: bool = True,
        subprocess: bool = False,
    ) -> Policy:
        """Files only under `roots_rw` (read and write) and `roots_ro` (read only).

        With `interpreter` (the default) the interpreter's own files stay readable
        (`interpreter_roots()`: prefixes, stdlib, `sys.path`...) and `os.devnull`
        writable, so lazy imports and tracebacks still work. Subprocesses are
        refused unless `subprocess`: a child is beyond any audit hook, so it
        would carry the code outside the scope. The network is left alone.
        """
        scope = FileScope.of(roots_rw, roots_ro, interpreter=interpreter)
        return cls(owner=owner, limit=limit, subprocess=subprocess, scope=scope)

    def allows(self, event: Event, resolve: Resolver) -> bool:
        if self.scope is not None and self.scope.outside(event):
            return False
        if event.kind in ("dns", "network"):
            return self.hosts is None or self._host_allowed(event.host or "", resolve)
        if event.kind == "subprocess":
            return self.subprocess
        if event.kind == "bytecode":
            return True  # the import system's cache: only a scope judges it
        forbidden = bool(self.files) and os.path.abspath(event.path or "") in self.files
        if event.kind == "file_write":
            return self.writes and not forbidden
        return not forbidden

    def _host_allowed(self, host: str, resolve: Resolver) -> bool:
        assert self.hosts is not None
        host = normal_host(host)
        if host in self.addresses or any(host_matches(host, p) for p in self.hosts):
            return True
        if not is_ip(host):
            return False
        if self.names_only:
            return bool(self.hosts)
        # An IP nobody looked up here (asyncio resolves in an executor thread
        # that does not carry the context): attribute it by resolving the
        # exact names allowed. Wildcards cannot be resolved, so they stay closed.
        for name in self.hosts:
            if not name.startswith("*.") and not is_ip(name):
                self.addresses.update(resolve(name))
        return host in self.addresses

    def refuse(self, event: Event) -> Refused:
        """Remember the refusal and build the error to raise."""
        self.denied.append(event)
        return Refused(f"{self.owner}: {event.detail} is outside {self.limit}", event, self)

    def saw(self, event: Event) -> None:
        """Every event reaches every layer first; a recording layer keeps it."""
        if self.record and event.kind not in ("file_read", "bytecode"):
            self.observed.append(event)

    def allowed(self, event: Event) -> None:
        """Every layer allowed `event`: remember the hosts contacted."""
        if event.host and event.kind in ("dns", "network"):
            host = normal_host(event.host)
            if host not in self.contacted:
                self.contacted.append(host)

    def learn(self, name: str, addresses: set[str]) -> None:
        """`name` was looked up with this layer's permission: its addresses are allowed."""
        if self.hosts is not None and any(host_matches(name, p) for p in self.hosts):
            self.addresses.update(normal_host(a) for a in addresses)


# What a layer records while guarding (`observed`, `denied`...): every field built by
# a factory, so `fresh` gives each new layer its own, whatever fields are added later.
_RECORDS = tuple(
    (f.name, f.default_factory) for f in fields(Policy) if f.default_factory is not MISSING
)
_FACTORIES: dict[str, Callable[[], Any]] = dict(_RECORDS)
