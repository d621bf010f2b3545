"""The host-side egress proxy for sandboxed commands allowed to reach only
some hosts: the launch layer's tool steps whose sealed reach names hosts,
and the agent's Bash under `[agent.sandbox] network = [hosts]`.

The sandbox keeps its own empty network namespace (`--unshare-net`: only a
loopback device), so nothing inside can reach the network directly. The
proxy listens on a Unix socket bound into the sandbox; a tiny forwarder
started inside the sandbox (`FORWARDER`, run by the sandbox's python3)
listens on `127.0.0.1:3128` and relays each connection to that socket, and
the tool sees `HTTP_PROXY`/`HTTPS_PROXY=http://127.0.0.1:3128`. The proxy
speaks `CONNECT host:port` (HTTPS, or any TCP) and absolute-URI `http://`
requests, admits only the declared endpoints (`_authority.py`: `host:port`
that port, a bare host ports 80 and 443), answers 403 otherwise, and records
every decision: the method, the target as sent, the canonical host and port,
allowed, denied or malformed, and why.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from flightdeck.guard._authority import (
    DEFAULT_PORTS,
    BadAuthority,
    Endpoint,
    admits,
    declared,
    requested,
)

PROXY_PORT = 3128
SOCKET_IN_SANDBOX = "/run/flightdeck-egress.sock"

# Run as `python3 -c FORWARDER <argv...>` inside the sandbox: fork a relay
# from 127.0.0.1:3128 to the proxy socket, then exec the tool's argv.
FORWARDER = r"""
import os, socket, sys, threading
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", __PORT__)); server.listen(64)
if os.fork() == 0:
    while True:
        client, _ = server.accept()
        upstream = socket.socket(socket.AF_UNIX); upstream.connect(__SOCKET_PATH__)
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
server.close()
os.execvp(sys.argv[1], sys.argv[1:])
""".replace("__PORT__", str(PROXY_PORT)).replace("__SOCKET_PATH__", repr(SOCKET_IN_SANDBOX))


# Run on the host as `python -c RELAY <proxy socket path>` after joining only
# the sandbox's network namespace (`nsenter -n`), so a sandbox whose root is
# an image without python3 still gets its relay: it listens on the sandbox's
# 127.0.0.1:3128, prints "ready", and relays each connection to the socket.
RELAY = (
    FORWARDER.split("server = socket.socket()", 1)[0]
    + r"""
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", __PORT__)); server.listen(64)
print("ready", flush=True)
while True:
    client, _ = server.accept()
    upstream = socket.socket(socket.AF_UNIX); upstream.connect(sys.argv[1])
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
""".replace("__PORT__", str(PROXY_PORT))
)


@dataclass(frozen=True)
class Decision:
    """One request the proxy answered: what was asked, and what it decided."""

    method: str
    target: str  # as the tool sent it (cut to 200 characters)
    endpoint: Endpoint | None  # None: the authority was refused as malformed
    decision: str  # "allowed" | "denied" | "malformed"
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "target": self.target,
            "host": self.endpoint.host if self.endpoint else None,
            "port": self.endpoint.port if self.endpoint else None,
            "decision": self.decision,
            "reason": self.reason,
        }


@dataclass
class EgressProxy:
    """Admits exactly the declared endpoints: `host:port` that port only, a
    bare `host` its http/https ports (80, 443). `any_port` keeps the older
    meaning of a bare host, every port (the agent's `network = [hosts]`)."""

    # What a sandbox needs to reach the proxy: the relay to run inside, the
    # port it listens on there, and where the proxy's socket is bound.
    FORWARDER: ClassVar[str] = FORWARDER
    RELAY: ClassVar[str] = RELAY
    PORT: ClassVar[int] = PROXY_PORT
    SOCKET_IN_SANDBOX: ClassVar[str] = SOCKET_IN_SANDBOX
    DEFAULT_PORTS: ClassVar[tuple[int, ...]] = DEFAULT_PORTS
    BadHost: ClassVar[type[ValueError]] = BadAuthority

    hosts: frozenset[str]
    any_port: bool = False
    contacted: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    _server: asyncio.AbstractServer | None = None
    endpoints: frozenset[Endpoint] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        # Raises BadHost for a declaration the proxy could not honour exactly.
        self.endpoints = frozenset(e for h in self.hosts for e in declared(h))

    @staticmethod
    def check_declared(entry: str) -> list[str]:
        """The canonical endpoints a declared entry admits (raises BadHost)."""
        return [str(e) for e in declared(entry)]

    async def start(self, path: Path) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=str(path))

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def decide(self, method: str, target: str) -> Endpoint | None:
        """Judge one request line's method and target and record the decision:
        `CONNECT host:port` (port required), else an absolute `http://` URL
        (port 80 unless given). The endpoint to connect to, or None."""
        shown = target[:200]
        try:
            if method == "CONNECT":
                asked = requested(target, default_port=None)
            else:
                asked = requested(_http_authority(target), default_port=80)
        except BadAuthority as exc:
            self.decisions.append(Decision(method, shown, None, "malformed", str(exc)))
            self.denied.append(shown)
            return None
        rule = admits(self.endpoints, asked)
        if rule is None and self.any_port:
            bare = {Endpoint(e.host, asked.port) for e in self.endpoints}
            rule = admits(frozenset(bare), asked)
        if rule is None:
            reason = "not a declared host:port"
            self.decisions.append(Decision(method, shown, asked, "denied", reason))
            self.denied.append(str(asked))
            return None
        self.decisions.append(Decision(method, shown, asked, "allowed", f"declared {rule}"))
        self.contacted.append(str(asked))
        return asked

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target, _ = [*line.split(" ", 2), "", ""][:3]
            method = method.upper()
            asked = self.decide(method, target)
            if asked is None:
                writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            up_reader, up_writer = await asyncio.open_connection(asked.host, asked.port)
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                up_writer.write(head)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            with contextlib.suppress(OSError):
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        finally:
            with contextlib.suppress(OSError):
                writer.close()


def _http_authority(target: str) -> str:
    """The authority of an absolute-form `http://` request target; other
    schemes (https:// would need the proxy to speak TLS) are refused."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() != "http":
        raise BadAuthority("only absolute http:// targets (or CONNECT) go through the proxy")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    return rest[:end]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


__all__ = ["EgressProxy"]
