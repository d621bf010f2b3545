"""The host-side egress proxy for sandboxed commands allowed to reach only
some hosts: the launch layer's tool steps whose sealed reach names hosts,
and the agent's Bash under `[agent.sandbox] network = [hosts]`.

The sandbox keeps its own empty network namespace (`--unshare-net`: only a
loopback device), so nothing inside can reach the network directly. The
proxy listens on a Unix socket bound into the sandbox; a tiny forwarder
started inside the sandbox (`FORWARDER`, run by the sandbox's python3)
listens on `127.0.0.1:3128` and relays each connection to that socket, and
the tool sees `HTTP_PROXY`/`HTTPS_PROXY=http://127.0.0.1:3128`. The proxy
speaks `CONNECT host:port` (HTTPS) and absolute-URI HTTP requests, admits
only the sealed hosts, answers 403 otherwise, and records what was reached
and what was refused.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

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


@dataclass
class EgressProxy:
    # What a sandbox needs to reach the proxy: the relay to run inside, the
    # port it listens on there, and where the proxy's socket is bound.
    FORWARDER: ClassVar[str] = FORWARDER
    PORT: ClassVar[int] = PROXY_PORT
    SOCKET_IN_SANDBOX: ClassVar[str] = SOCKET_IN_SANDBOX

    hosts: frozenset[str]
    contacted: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    _server: asyncio.AbstractServer | None = None

    async def start(self, path: Path) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=str(path))

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def _allowed(self, host: str) -> bool:
        ok = host.lower().rstrip(".") in self.hosts
        (self.contacted if ok else self.denied).append(host)
        return ok

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            if method.upper() == "CONNECT":
                host, _, port = target.rpartition(":")
                host = host.strip("[]")
                if not self._allowed(host):
                    writer.write(b"HTTP/1.1 403 Forbidden\r\n\r\n")
                    return
                up_reader, up_writer = await asyncio.open_connection(host, int(port or 443))
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                url = urlsplit(target)
                if not url.hostname or not self._allowed(url.hostname):
                    writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                    return
                up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port or 80)
                up_writer.write(head)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            with contextlib.suppress(OSError):
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        finally:
            with contextlib.suppress(OSError):
                writer.close()


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
