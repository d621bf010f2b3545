"""Stacked layers (a driver call inside a launch step) and how contexts carry them."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading

import pytest

from flightdeck.guard import Policy, Refused, active, enter, layers, leave

from .conftest import FakeDns


def step() -> Policy:
    return Policy.allow_hosts(
        ["a.example", "b.example"], owner="egress denied", limit="the trust contract hosts"
    )


def driver() -> Policy:
    return Policy.allow_hosts(
        ["b.example", "c.example"], owner="driver acme", limit="network.egress", names_only=True
    )


def lookup(host: str) -> str:
    try:
        socket.getaddrinfo(host, 443)
    except Refused as exc:
        return str(exc)
    except OSError:
        return "resolver"
    return "ok"


def test_a_host_must_be_allowed_by_every_layer(fake_dns: FakeDns) -> None:
    """Nesting rule: the innermost refusing layer speaks; each refusing layer remembers."""
    fake_dns.table.update({h: ["192.0.2.1"] for h in ("a.example", "b.example", "c.example")})
    outer, inner = step(), driver()
    with active(outer), active(inner):
        assert layers() == (outer, inner)
        assert lookup("b.example") == "ok"
        assert lookup("a.example") == "driver acme: lookup of a.example is outside network.egress"
        assert lookup("c.example") == (
            "egress denied: lookup of c.example is outside the trust contract hosts"
        )
        assert lookup("d.example").startswith("driver acme:")
    assert [d.target for d in inner.denied] == ["a.example", "d.example"]
    assert [d.target for d in outer.denied] == ["c.example", "d.example"]
    assert outer.contacted == inner.contacted == ["b.example"]


def test_an_inner_layer_cannot_widen_an_outer_one(fake_dns: FakeDns, listener: int) -> None:
    """names_only lets IPs pass in the driver's layer; the contract's layer still checks them."""
    outer = step()
    with active(outer), active(driver()), socket.socket() as sock, pytest.raises(Refused):
        sock.connect(("127.0.0.1", listener))
    assert [d.detail for d in outer.denied] == [f"connect to 127.0.0.1:{listener}"]


def test_a_recording_layer_sees_what_an_outer_layer_refuses(fake_dns: FakeDns) -> None:
    with active(step()), active(Policy.watch()) as watch:
        assert lookup("evil.example").startswith("egress denied:")
    assert [e.detail for e in watch.observed] == ["lookup of evil.example"]


def test_to_thread_and_tasks_inherit_the_layers(fake_dns: FakeDns) -> None:
    async def main() -> tuple[str, str]:
        with active(step()):
            in_thread = await asyncio.to_thread(lookup, "evil.example")
            in_task = await asyncio.create_task(asyncio.to_thread(lookup, "evil.example"))
        return in_thread, in_task

    assert (
        asyncio.run(main())
        == ("egress denied: lookup of evil.example is outside the trust contract hosts",) * 2
    )


def test_a_plain_thread_does_not_inherit(fake_dns: FakeDns) -> None:
    """Documented limit: only copied contexts carry the guard."""
    seen: list[str] = []
    with active(step()) as policy:
        thread = threading.Thread(target=lambda: seen.append(lookup("evil.example")))
        thread.start()
        thread.join()
    assert seen == ["resolver"] and policy.denied == []


def test_re_entering_a_layer_per_stream_step_restores_the_stack(fake_dns: FakeDns) -> None:
    """Drivers re-enter a call's layer around each chunk of a stream."""
    policy = driver()
    for _ in range(3):
        token = enter(policy)
        with contextlib.suppress(OSError):
            socket.getaddrinfo("evil.example", 443)
        leave(token)
    assert layers() == () and len(policy.denied) == 3
