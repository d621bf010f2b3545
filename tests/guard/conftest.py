"""A fake resolver (no network in tests) and a loopback listener."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass
class FakeDns:
    """Answers from `table`; IP literals answer themselves. Raises the same audit event
    as the real `socket.getaddrinfo`, so the guard sees it."""

    table: dict[str, list[str]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        sys.audit("socket.getaddrinfo", host, port, 0, 0, 0)
        name = host.decode() if isinstance(host, bytes) else str(host)
        try:
            addresses = [str(ipaddress.ip_address(name))]
        except ValueError:
            self.asked.append(name)
            if name not in self.table:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
            addresses = self.table[name]
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 0)))
            for address in addresses
        ]


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    fake = FakeDns()
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield int(server.getsockname()[1])
    server.close()
