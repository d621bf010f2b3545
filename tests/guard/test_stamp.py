"""`Policy.stamper`: per-call layers with a template's rules and records made on first use.

A stamped layer must judge and record exactly as a layer from `fresh()` (the
eager copy) and as a newly built policy does; these tests pin that."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.guard import Event, Policy, Refused
from flightdeck.guard._hook import _judge

from .conftest import FakeDns

BUILDERS: list[Callable[[], Policy]] = [
    lambda: Policy.watch(),
    lambda: Policy.allow_hosts(["API.example.com.", "*.x.org"], owner="o", limit="l"),
    lambda: Policy.allow_hosts(["api.example.com"], owner="o", limit="l", names_only=True),
    lambda: Policy.allow_hosts([], owner="o", limit="l", names_only=True),
    lambda: Policy.deny_all(["/secret.txt"], owner="o", limit="l"),
    lambda: Policy(owner="o", limit="l", writes=False, record=True, hosts=frozenset({"1.2.3.4"})),
]
RECORDS = ("observed", "contacted", "denied", "addresses")
HOSTS = ["api.example.com", "a.x.org", "evil.example.net", "1.2.3.4", "10.0.0.7", "x.org"]
DNS = {"api.example.com": ["10.0.0.7"], "a.x.org": ["10.0.0.8"], "evil.example.net": ["6.6.6.6"]}

events = st.one_of(
    st.sampled_from(HOSTS).map(lambda h: Event("dns", f"lookup of {h}", host=h)),
    st.sampled_from(HOSTS).map(lambda h: Event("network", f"connect to {h}", host=h)),
    st.just(Event("subprocess", "run x")),
    st.sampled_from(["/secret.txt", "/tmp/out"]).map(
        lambda p: Event("file_write", f"open {p} for writing", path=p)
    ),
    st.sampled_from(["/secret.txt", "/tmp/in"]).map(
        lambda p: Event("file_read", f"open {p}", path=p)
    ),
)


def _run(layer: Policy, script: list[Event]) -> list[str | None]:
    """Each event judged as the hook judges it: the refusal's words, or None."""
    verdicts: list[str | None] = []
    for event in script:
        try:
            _judge((layer,), event)
            verdicts.append(None)
        except Refused as refused:
            assert refused.policy is layer
            verdicts.append(str(refused))
    return verdicts


def _records(layer: Policy) -> dict[str, object]:
    return {name: getattr(layer, name) for name in RECORDS}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(BUILDERS))), st.lists(events, max_size=8))
def test_a_stamped_layer_judges_and_records_as_a_fresh_one(which: int, script: list[Event]) -> None:
    template = BUILDERS[which]()
    stamp = template.stamper()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", FakeDns(dict(DNS)))
        fresh, stamped, built = template.fresh(), stamp(), BUILDERS[which]()
        verdicts = [_run(layer, script) for layer in (fresh, stamped, built)]
    assert verdicts[0] == verdicts[1] == verdicts[2]
    assert _records(fresh) == _records(stamped) == _records(built)
    assert stamped.refused_any() == bool(fresh.denied) == (any(verdicts[0]))
    assert _records(template) == _records(BUILDERS[which]())  # the template is untouched


@pytest.mark.parametrize("build", BUILDERS)
def test_a_stamped_layer_has_the_rules_and_no_records_shared(
    build: Callable[[], Policy],
) -> None:
    template = build()
    stamp = template.stamper()
    one, two = stamp(), stamp()
    assert type(one) is Policy and one is not two
    for name, value in vars(build()).items():
        assert getattr(one, name) == value, name
    assert not one.refused_any()
    one.denied.append(Event("dns", "lookup of x", host="x"))
    one.addresses.add("192.0.2.1")
    assert one.refused_any() and not two.refused_any()
    assert two.denied == [] and two.addresses == set()
    assert template.denied == [] and template.addresses == set()
    for name in RECORDS:
        assert getattr(one, name) is not getattr(two, name) is not getattr(template, name)


def test_a_stamper_keeps_the_rules_it_was_made_with() -> None:
    template = Policy.allow_hosts(["a.example"], owner="o", limit="l")
    stamp = template.stamper()
    template.hosts = frozenset({"b.example"})
    assert stamp().hosts == frozenset({"a.example"})
    assert template.stamper()().hosts == frozenset({"b.example"})


def test_a_missing_name_is_still_an_attribute_error() -> None:
    layer = Policy.watch().stamper()()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr(layer, "nope")  # noqa: B009 - the name must not exist for mypy either
    assert not hasattr(layer, "__deepcopy__")


def test_threads_sharing_a_layer_keep_every_refusal() -> None:
    """Records are made on first use by whichever thread comes first; none is lost."""
    for _ in range(50):
        layer = Policy.deny_all(owner="o", limit="l").stamper()()
        start = threading.Barrier(4)

        def refuse(n: int, layer: Policy = layer, start: threading.Barrier = start) -> None:
            start.wait()
            layer.refuse(Event("subprocess", f"run {n}"))

        threads = [threading.Thread(target=refuse, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(event.detail for event in layer.denied) == [f"run {n}" for n in range(4)]


def test_records_are_made_on_first_use_only() -> None:
    layer = Policy.deny_all(owner="o", limit="l").stamper()()
    assert not set(RECORDS) & set(vars(layer))
    assert not layer.refused_any()
    assert not set(RECORDS) & set(vars(layer))  # asking made nothing
    with pytest.raises(Refused):
        _judge((layer,), Event("subprocess", "run x"))
    assert set(vars(layer)) & set(RECORDS) == {"denied"} and layer.refused_any()
