"""network.egress is enforced during calls (AIP-30 design principle 7: fail closed)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers import DriverCallError, SdkDriver, call_tool, load_driver
from tests.drivers._ws import add_driver, sdk_driver, workspace

NET_MODULE = """
import socket


def dial(value):
    with socket.create_connection((value["text"], value["times"]), timeout=2):
        return {"ok": True}


async def adial(value):
    return dial(value)


SEEN = []


def tell(value):
    try:
        dial(value)
    except OSError as exc:
        SEEN.append(str(exc))
    return {"ok": False}


def swallow(value):
    try:
        dial(value)
    except OSError:
        return {"ok": False}
    return {"ok": True}
"""


@pytest.fixture
def listener() -> Iterator[int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    yield int(srv.getsockname()[1])
    srv.close()


def make(tmp_path: Path, ref: str, egress: list[str] | None) -> SdkDriver:
    extra: dict[str, Any] = {} if egress is None else {"network": {"egress": egress}}
    data = sdk_driver(function_ref=ref, **extra)
    return load_driver(add_driver(workspace(tmp_path), data, NET_MODULE))


def call(driver: SdkDriver, host: str, port: int) -> Any:
    return asyncio.run(call_tool("text.echo", {"text": host, "times": port}, driver=driver)).output


@pytest.mark.parametrize("ref", ["dial", "adial", "swallow"])
def test_aip30_no_egress_declared_means_no_connection(
    tmp_path: Path, listener: int, ref: str
) -> None:
    driver = make(tmp_path, ref, None)
    with pytest.raises(DriverCallError) as info:
        call(driver, "127.0.0.1", listener)
    assert info.value.code == "egress_denied"
    # Refused at the lookup already (before any connect), and the message says why.
    assert f"{ref} tried lookup of 127.0.0.1" in info.value.message
    assert "outside network.egress (none declared)" in info.value.message
    # the guard ends with the call
    socket.create_connection(("127.0.0.1", listener), timeout=2).close()


def test_declared_egress_allows_the_connection(tmp_path: Path, listener: int) -> None:
    assert call(make(tmp_path, "dial", ["127.0.0.1"]), "127.0.0.1", listener) == {"ok": True}


def test_aip30_lookup_of_an_undeclared_host_fails_closed(tmp_path: Path, listener: int) -> None:
    driver = make(tmp_path, "dial", ["127.0.0.1"])
    with pytest.raises(DriverCallError) as info:
        call(driver, "localhost", listener)
    assert info.value.code == "egress_denied"
    assert "lookup of localhost" in info.value.message


def test_sync_pipeline_is_guarded_too(tmp_path: Path, listener: int) -> None:
    driver = make(tmp_path, "dial", [])
    with pytest.raises(DriverCallError, match="egress_denied"):
        driver.invoke_sync("text.echo", {"text": "127.0.0.1", "times": listener}, {})


def test_each_call_has_its_own_layer_and_follows_a_changed_egress(
    tmp_path: Path, listener: int
) -> None:
    """The per-call layer is stamped from a template built once: a refusal one call
    recorded does not leak into the next, and a driver whose egress changes is held
    to the new list."""
    driver = make(tmp_path, "swallow", [])
    for _ in range(2):  # the package swallows the refusal; the call still fails closed
        with pytest.raises(DriverCallError) as info:
            call(driver, "127.0.0.1", listener)
        assert info.value.code == "egress_denied"
        assert info.value.details == {"denied": ["lookup of 127.0.0.1"]}
    driver.egress = ("127.0.0.1",)
    assert call(driver, "127.0.0.1", listener) == {"ok": True}
    driver.egress = ()
    with pytest.raises(DriverCallError, match=r"outside network\.egress \(none declared\)"):
        call(driver, "127.0.0.1", listener)


@pytest.mark.parametrize("ref", ["dial", "swallow"])
def test_sync_pipeline_fails_closed_when_the_package_swallows_the_refusal(
    tmp_path: Path, listener: int, ref: str
) -> None:
    """`invoke_sync` writes the guard out inline: a refusal the package caught, or one
    it let through, is still the call's `egress_denied`, each call with its own record."""
    driver = make(tmp_path, ref, [])
    for _ in range(2):
        with pytest.raises(DriverCallError) as info:
            driver.invoke_sync("text.echo", {"text": "127.0.0.1", "times": listener}, {})
        assert info.value.code == "egress_denied"
        assert info.value.details == {"denied": ["lookup of 127.0.0.1"]}
    driver.egress = ("127.0.0.1",)
    out = driver.invoke_sync("text.echo", {"text": "127.0.0.1", "times": listener}, {})
    assert out == {"ok": True}


@pytest.mark.parametrize("sync", [True, False])
def test_the_refusal_inside_the_package_names_the_driver_and_its_egress_as_they_are_now(
    tmp_path: Path, listener: int, sync: bool
) -> None:
    """The layer's template follows the driver's id and egress: a renamed driver or a
    changed egress is worded as it is at the call, on both paths."""
    driver = make(tmp_path, "tell", ["api.example.com"])
    seen = driver.import_report.module.SEEN  # type: ignore[union-attr]
    value = {"text": "localhost", "times": listener}  # a name: egress names are checked
    declared = ("api.example.com",)
    # the id alone changes, then the egress alone, then both
    steps = [("echo-sdk", declared), ("renamed", declared), ("renamed", ()), ("again", ("a.b",))]
    for ident, egress in steps:
        driver.id, driver.egress = ident, egress
        with pytest.raises(DriverCallError, match="egress_denied"):
            if sync:
                driver.invoke_sync("text.echo", value, {})
            else:
                call(driver, "localhost", listener)
        allowed = ", ".join(egress) or "none declared"
        assert seen[-1] == (
            f"driver {ident}: lookup of localhost is outside network.egress ({allowed})"
        )
