"""A driver call (its `network.egress` layer) inside a launch step's contract layer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers import DriverCallError, SdkDriver, call_tool, load_driver
from flightdeck.launch import EgressPolicy, guard
from tests.drivers._ws import add_driver, sdk_driver, workspace

from .conftest import FakeDns

NET_MODULE = """
import socket


def dial(value):
    with socket.create_connection((value["text"], value["times"]), timeout=2):
        return {"ok": True}
"""


def driver(tmp_path: Path, egress: list[str]) -> SdkDriver:
    data = sdk_driver(function_ref="dial", network={"egress": egress})
    return load_driver(add_driver(workspace(tmp_path), data, NET_MODULE))


def dial(sdk: SdkDriver, port: int) -> Any:
    value = {"text": "127.0.0.1", "times": port}
    return asyncio.run(call_tool("text.echo", value, driver=sdk)).output


def contract(*hosts: str) -> EgressPolicy:
    return EgressPolicy.allow_hosts(hosts, owner="egress denied", limit="the trust contract hosts")


def test_the_step_allows_what_the_driver_declares(tmp_path: Path, listener: int) -> None:
    sdk = driver(tmp_path, ["127.0.0.1"])
    with guard(contract("127.0.0.1")) as step:
        assert dial(sdk, listener) == {"ok": True}
    assert step.contacted == ["127.0.0.1"] and step.denied == []


def test_the_contract_still_refuses_what_the_driver_declares(
    tmp_path: Path, listener: int, fake_dns: FakeDns
) -> None:
    """Nesting: a host must be allowed by every layer; the step's layer remembers."""
    sdk = driver(tmp_path, ["127.0.0.1"])
    with guard(contract("api.example.com")) as step, pytest.raises(DriverCallError) as caught:
        dial(sdk, listener)
    assert "outside the trust contract hosts" in caught.value.message
    assert [d.target for d in step.denied] == ["127.0.0.1"]


def test_the_driver_refuses_inside_a_permissive_step(tmp_path: Path, listener: int) -> None:
    sdk = driver(tmp_path, [])
    with guard(contract("127.0.0.1")) as step, pytest.raises(DriverCallError) as caught:
        dial(sdk, listener)
    assert caught.value.code == "egress_denied"
    assert step.denied == []  # the driver's layer refused, not the contract's
