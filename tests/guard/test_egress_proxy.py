"""The egress proxy's decisions, driven over its Unix socket (no sandbox needed):
declared `host:port` admits that port only, a bare host ports 80 and 443,
malformed authorities are refused whole, and every decision is recorded."""

from __future__ import annotations

import asyncio
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.guard import EgressProxy


async def _ask(proxy: EgressProxy, folder: Path, line: str) -> bytes:
    path = folder / "p.sock"
    await proxy.start(path)
    try:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(line.encode("latin-1") + b"\r\n\r\n")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(100), 5)
        writer.close()
        return answer
    finally:
        await proxy.close()
        path.unlink(missing_ok=True)


def ask(hosts: list[str], line: str, folder: Path) -> tuple[bytes, EgressProxy]:
    proxy = EgressProxy(frozenset(hosts))
    return asyncio.run(_ask(proxy, folder, line)), proxy


@pytest.mark.parametrize(
    ("hosts", "target", "decision"),
    [
        (["127.0.0.1:39939"], "127.0.0.1:39939", "allowed"),
        (["127.0.0.1:39939"], "127.0.0.1:39940", "denied"),
        (["localhost"], "localhost:8080", "denied"),
        (["localhost"], "LOCALHOST.:443", "allowed"),
        (["localhost"], "localhost:80", "allowed"),
        (["127.0.0.1:39939"], "127.0.0.1:39939:1", "malformed"),
        (["127.0.0.1"], "127.0.0.1", "malformed"),  # CONNECT needs a port
        (["127.0.0.1"], "user@127.0.0.1:443", "malformed"),
        (["127.0.0.1"], "127.1:443", "malformed"),
        (["127.0.0.1"], "[::ffff:127.0.0.1]:443", "denied"),
        (["::1"], "[::1]:443", "allowed"),
        (["[::1]:8443"], "[0:0::1]:8443", "allowed"),
        (["[::1]:8443"], "[::1%lo]:8443", "malformed"),
        (["bücher.example"], "xn--bcher-kva.example:443", "allowed"),
        (["bücher.example"], "bücher.example:443", "malformed"),
        (["*.example.com"], "api.example.com:443", "allowed"),
        (["*.example.com"], "example.com:443", "denied"),
        (["example.com"], "example.com:0443", "allowed"),
        (["example.com"], "example.com: 443", "malformed"),
    ],
)
def test_connect_decisions(hosts: list[str], target: str, decision: str, tmp_path: Path) -> None:
    proxy = EgressProxy(frozenset(hosts))
    proxy.decide("CONNECT", target)  # connecting is the launch suite's business
    (made,) = proxy.decisions
    assert made.decision == decision, made
    assert made.method == "CONNECT" and made.target == target
    if decision == "malformed":
        assert made.endpoint is None and proxy.denied == [target]
    else:
        assert made.endpoint is not None
        assert (proxy.contacted if decision == "allowed" else proxy.denied) == [str(made.endpoint)]


def test_refusals_are_answered_403_and_recorded(tmp_path: Path) -> None:
    answer, proxy = ask(["localhost"], "CONNECT localhost:9 HTTP/1.1", tmp_path)
    assert answer.startswith(b"HTTP/1.1 403")
    answer, proxy = ask(["localhost"], "GET http://localhost:9/x HTTP/1.1", tmp_path)
    assert answer.startswith(b"HTTP/1.1 403")
    assert proxy.decisions[0].to_dict() == {
        "method": "GET",
        "target": "http://localhost:9/x",
        "host": "localhost",
        "port": 9,
        "decision": "denied",
        "reason": "not a declared host:port",
    }
    answer, proxy = ask(["localhost"], "GET ftp://localhost/ HTTP/1.1", tmp_path)
    assert answer.startswith(b"HTTP/1.1 403") and proxy.decisions[0].decision == "malformed"
    answer, proxy = ask(["localhost"], "garbage", tmp_path)
    assert answer.startswith(b"HTTP/1.1 403") and proxy.decisions[0].decision == "malformed"


def test_a_bare_http_url_means_port_80(tmp_path: Path) -> None:
    proxy = EgressProxy(frozenset(["example.com"]))
    proxy.decide("GET", "http://example.com/path?q")
    proxy.decide("GET", "http://example.com:8080/")
    proxy.decide("GET", "http://evil.example@example.com/")
    assert [d.decision for d in proxy.decisions] == ["allowed", "denied", "malformed"]


def test_the_agents_any_port_mode_keeps_bare_hosts_on_every_port() -> None:
    proxy = EgressProxy(frozenset(["127.0.0.1"]), any_port=True)
    proxy.decide("CONNECT", "127.0.0.1:9999")
    proxy.decide("CONNECT", "127.0.0.2:9999")
    assert [d.decision for d in proxy.decisions] == ["allowed", "denied"]


@pytest.mark.parametrize(
    "entry",
    ["", "a b", "u@h", "h:0", "h:99999", "h:", "1.2.3", "*.1.2.3.4", "[::1", "a:b:c", "h%2e"],
)
def test_bad_declarations_are_refused(entry: str) -> None:
    with pytest.raises(EgressProxy.BadHost):
        EgressProxy(frozenset([entry]))


_ALPHABET = string.ascii_letters + string.digits + ".:[]@%-_+ /x\u00fc"


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, max_size=30), st.text(_ALPHABET, max_size=30))
def test_never_half_matched(declared: str, asked: str) -> None:
    """Whatever the spelling, an allowed request is exactly a declared endpoint,
    and it re-parses to itself (what is audited is what is connected)."""
    try:
        proxy = EgressProxy(frozenset([declared]))
    except EgressProxy.BadHost:
        return
    got = proxy.decide("CONNECT", asked)
    if got is None:
        return
    assert got in proxy.endpoints or any(
        e.host.startswith("*.") and got.host.endswith(e.host[1:]) and got.port == e.port
        for e in proxy.endpoints
    )
    again = EgressProxy(frozenset([str(got)])).decide("CONNECT", str(got))
    assert again == got
