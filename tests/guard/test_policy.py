"""Policy semantics of the process guard: what one layer records, allows and refuses."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.guard import Event, Policy, Refused, active, host_matches, layers

from .conftest import FakeDns


def contract(*hosts: str) -> Policy:
    return Policy.allow_hosts(hosts, owner="egress denied", limit="the trust contract hosts")


def test_watch_records_side_effects_and_refuses_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    (tmp_path / "in.txt").write_text("x")
    with active(Policy.watch()) as watch:
        target.write_text("written")
        (tmp_path / "in.txt").read_text()  # plain reads are not side effects
        (tmp_path / "__pycache__").mkdir()  # the import system's bytecode is not either
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        sys.audit("socket.getaddrinfo", "api.example.com", 443, 0, 0, 0)
    kinds = [event.kind for event in watch.observed]
    assert kinds == ["file_write", "subprocess", "dns"]
    assert watch.observed[0].detail == f"open {target} for writing"
    assert watch.observed[2].to_dict() == {"kind": "dns", "detail": "lookup of api.example.com"}
    assert watch.denied == []


def test_host_allow_list_refuses_other_names_and_remembers(fake_dns: FakeDns) -> None:
    """A refusal raises in the guarded code and is remembered even when swallowed."""
    fake_dns.table["api.example.com"] = ["192.0.2.10"]
    policy = contract("api.example.com")
    with active(policy):
        socket.getaddrinfo("api.example.com", 443)
        with contextlib.suppress(OSError):  # Refused is a PermissionError
            socket.getaddrinfo("exfil.example.net", 443)
    assert [d.target for d in policy.denied] == ["exfil.example.net"]
    assert policy.contacted == ["api.example.com"]
    assert policy.addresses == {"192.0.2.10"}  # learned with the guard off
    with active(contract("api.example.com")), pytest.raises(Refused) as caught:
        socket.getaddrinfo("exfil.example.net", 443)
    assert caught.value.host == "exfil.example.net"
    assert str(caught.value) == (
        "egress denied: lookup of exfil.example.net is outside the trust contract hosts"
    )


def test_names_are_normalised_and_wildcards_match_subdomains_only() -> None:
    assert host_matches("API.Example.COM.", "api.example.com")
    assert host_matches("eu.api.example.com", "*.example.com")
    assert not host_matches("example.com", "*.example.com")
    assert not host_matches("badexample.com", "*.example.com")
    assert host_matches("0:0::1", "::1")


def test_connect_allowed_to_addresses_an_allowed_name_resolved_to(
    fake_dns: FakeDns, listener: int
) -> None:
    """Name -> address tracking: the IP a connect names is attributed to the looked-up name."""
    fake_dns.table["svc.internal"] = ["127.0.0.1"]
    policy = contract("svc.internal")
    with active(policy):
        socket.getaddrinfo("svc.internal", listener)
        socket.create_connection(("127.0.0.1", listener), timeout=5).close()
        with socket.socket() as sock, pytest.raises(Refused, match=r"connect to 192\.0\.2\.1:9"):
            sock.connect(("192.0.2.1", 9))  # refused before any packet is sent
    assert policy.contacted == ["svc.internal", "127.0.0.1"]
    assert [d.detail for d in policy.denied] == ["connect to 192.0.2.1:9"]


def test_an_ip_nobody_looked_up_is_attributed_by_resolving_allowed_names(
    fake_dns: FakeDns, listener: int
) -> None:
    """asyncio resolves in executor threads the guard cannot see: attribute on demand."""
    fake_dns.table["svc.internal"] = ["127.0.0.1"]
    with active(contract("svc.internal", "*.wild.example")), socket.socket() as sock:
        sock.connect(("127.0.0.1", listener))
    assert fake_dns.asked == ["svc.internal"]  # wildcards are never resolved


def test_names_only_lets_any_ip_pass_while_some_host_is_allowed(
    fake_dns: FakeDns, listener: int
) -> None:
    """AIP-30 network.egress: names are checked; addresses cannot be attributed."""
    declared = Policy.allow_hosts(["api.example.com"], owner="d", limit="e", names_only=True)
    with active(declared):
        socket.create_connection(("127.0.0.1", listener), timeout=5).close()
        with pytest.raises(Refused, match="lookup of localhost"):
            socket.getaddrinfo("localhost", listener)
    undeclared = Policy.allow_hosts([], owner="d", limit="e", names_only=True)
    with active(undeclared), socket.socket() as sock, pytest.raises(Refused):
        sock.connect(("127.0.0.1", listener))
    assert fake_dns.asked == []


def test_unix_sockets_are_not_egress(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    with active(contract()) as policy, socket.socket(socket.AF_UNIX) as client:
        client.connect(path)
    server.close()
    assert policy.denied == []


def test_subprocesses_refused_under_deny_all() -> None:
    policy = Policy.deny_all(owner="transform 't'", limit="a transform's reach")
    with active(policy), pytest.raises(Refused, match=r"transform 't': subprocess\.Popen"):
        subprocess.run(["true"], check=False)
    assert [d.kind for d in policy.denied] == ["subprocess"]


def test_listed_files_cannot_be_opened_even_by_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secrets.toml"
    secret.write_text("CANARY")
    (tmp_path / "other.txt").write_text("fine")
    monkeypatch.chdir(tmp_path)
    policy = Policy.deny_all([str(secret)], owner="transform", limit="its reach")
    with active(policy):
        assert (tmp_path / "other.txt").read_text() == "fine"
        with pytest.raises(Refused):
            secret.read_text()
        with pytest.raises(Refused):
            open("secrets.toml").close()  # the open itself is refused
    assert [d.target for d in policy.denied] == [str(secret), "secrets.toml"]


def test_writes_can_be_refused_while_reads_pass(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("x")
    policy = Policy(owner="reader", limit="read-only access", writes=False)
    with active(policy):
        assert (tmp_path / "in.txt").read_text() == "x"
        with pytest.raises(Refused, match="for writing"):
            (tmp_path / "out.txt").write_text("no")
        with pytest.raises(Refused, match=r"os\.remove"):
            os.remove(tmp_path / "in.txt")
    assert (tmp_path / "in.txt").exists() and not (tmp_path / "out.txt").exists()


def test_the_layer_ends_with_the_block() -> None:
    with active(contract()):
        assert len(layers()) == 1
    assert layers() == ()
    sys.audit("socket.getaddrinfo", "anything.example", 443, 0, 0, 0)  # no guard, no refusal


@pytest.mark.parametrize(
    "build",
    [
        lambda: Policy.watch(),
        lambda: Policy.allow_hosts(["API.example.com.", "*.x.org"], owner="o", limit="l"),
        lambda: Policy.allow_hosts([], owner="o", limit="l", names_only=True),
        lambda: Policy.deny_all(["secret.txt"], owner="o", limit="l"),
        lambda: Policy.confine_files(["/tmp"], owner="o", limit="l"),
    ],
)
def test_fresh_has_the_rules_of_a_new_policy_and_its_own_records(
    build: Callable[[], Policy],
) -> None:
    """`fresh` stamps per-call layers from a template: same rules, nothing shared."""
    template = build()
    copy = template.fresh()
    made = build()
    assert type(copy) is Policy
    for f in dataclasses.fields(Policy):
        assert getattr(copy, f.name) == getattr(made, f.name), f.name
        if f.default_factory is not dataclasses.MISSING:
            assert getattr(copy, f.name) is not getattr(template, f.name), f.name
    copy.denied.append(Event("dns", "lookup of x", host="x"))
    copy.addresses.add("192.0.2.1")
    assert template.denied == [] and template.addresses == set()
    assert template.fresh().denied == []


@given(st.lists(st.sampled_from(["a", "..", ".", "b", "", "/", "//", "x/../y"]), max_size=6))
def test_a_policy_names_its_files_as_abspath_would(parts: list[str]) -> None:
    # The normalised file list is cached per (files, cwd): it must be
    # exactly what os.path.abspath gives, relative names included.
    name = "/".join(parts) or "f"
    for candidate in (name, "/" + name):
        policy = Policy.deny_all([candidate], owner="t", limit="t")
        assert policy.files == frozenset({os.path.abspath(candidate)})
