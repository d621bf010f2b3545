"""`invoke_sync` writes the pipeline out for speed; it must end as `invoke` does.

`invoke` over the same sync function (run via `asyncio.to_thread`, through
`_prepare`, `_Guarded` and `_finish`) is the reference: every case's value, or
its error's code, message, pointer, hint and details, must be the same."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.drivers import DriverCallError, SdkDriver, load_driver
from tests.drivers._ws import add_driver, sdk_driver, workspace

CANARY = "canary-51d0e7-secret"

MODULE = """
class Expired(Exception):
    pass


def echo(value):
    return {"text": value["text"], "nested": {"k": [1, value.get("times")]}, "flat": 3}


def pick(text, times=1, seed=None):
    return {"text": text * times, "seed": seed}


def boom(text):
    raise ValueError("bad input: " + text)


def expired(value):
    raise Expired("token gone")


def not_json(value):
    return {"a": 1, "b": object()}


def flat(value):
    return {"text": value["text"], "n": None, "ok": True}


async def aecho(value):
    return {"text": value["text"]}


async def chunks(value):
    for part in (value["text"], "!"):
        yield {"text": part}


def swallow(value):
    import socket
    try:
        socket.getaddrinfo("denied.example.invalid", 443)
    except OSError:
        pass
    return {"text": "after"}
"""

TEMPLATE = {"text": "${input.text}", "times": "${input.times | default(2)}"}
CASES: dict[str, dict[str, Any]] = {
    "echo-text": {"function_ref": "echo", "sdk": {"result_extract": "$.text"}},
    "echo-deep": {"function_ref": "echo", "sdk": {"result_extract": "$.nested.k"}},
    "echo-index": {"function_ref": "echo", "sdk": {"result_extract": "$.nested.k[1]"}},
    "echo-whole": {"function_ref": "echo"},
    "echo-miss": {"function_ref": "echo", "sdk": {"result_extract": "$.missing"}},
    "pick": {"function_ref": "pick", "sdk": {"args_template": TEMPLATE}},
    "pick-seed": {"function_ref": "pick", "sdk": {"args_template": {"text": "${input.seed}"}}},
    "pick-secret": {
        "function_ref": "pick",
        "sdk": {
            "args_template": {"text": "${input.text}", "seed": "${secrets.ECHO_KEY}"},
            "result_extract": "$.missing",
        },
    },
    "boom-secret": {
        "function_ref": "boom",
        "sdk": {"args_template": {"_0": "${input.text} ${secrets.ECHO_KEY}"}},
    },
    "expired": {
        "function_ref": "expired",
        "auth": {
            "state": {"env": ["ECHO_KEY"]},
            "expiry": {"detect": "exception:Expired"},
        },
    },
    "not-json": {"function_ref": "not_json"},
    "flat": {"function_ref": "flat", "sdk": {"result_extract": "$.text"}},
    "flat-whole": {"function_ref": "flat"},
    "swallow": {"function_ref": "swallow"},
    "async": {"function_ref": "aecho", "sdk": {"result_extract": "$.text"}},
    "stream": {"function_ref": "chunks", "sdk": {"result_extract": "$.text"}},
}


@pytest.fixture(scope="module")
def drivers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SdkDriver]:
    out = {}
    for name, spec in CASES.items():
        ws = workspace(tmp_path_factory.mktemp(name))
        spec = {"auth": {"state": {"env": ["ECHO_KEY"]}}, **spec}
        data = sdk_driver(ident=f"d-{name}", **spec)
        out[name] = load_driver(add_driver(ws, data, MODULE), environ={"ECHO_KEY": CANARY})
    return out


def outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except DriverCallError as exc:
        return ("error", exc.code, exc.message, exc.pointer, exc.hint, exc.details)


def both(driver: SdkDriver, value: Any) -> tuple[Any, Any]:
    fast = outcome(lambda: driver.invoke_sync("text.echo", value, {}))
    slow = outcome(lambda: asyncio.run(driver.invoke("text.echo", value, {})))
    return fast, slow


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_ends_the_same_both_ways(drivers: dict[str, SdkDriver], name: str) -> None:
    fast, slow = both(drivers[name], {"text": "hi", "times": 3})
    assert fast == slow
    assert CANARY not in repr(fast)


def test_the_cases_reach_every_ending(drivers: dict[str, SdkDriver]) -> None:
    """The cases are worth comparing: every ending the sync path writes out occurs."""
    endings = set()
    for driver in drivers.values():
        got = outcome(lambda d=driver: d.invoke_sync("text.echo", {"text": "x"}, {}))
        endings.add(got[1] if got[0] == "error" else "ok")
        if got[0] == "error" and got[1] == "driver_call_failed" and got[4]:
            endings.add("auth_expired")
    assert endings == {
        "ok",
        "auth_expired",
        "driver_call_failed",
        "egress_denied",
        "extract_no_match",
        "output_invalid",
        "template_error",
    }


values = st.fixed_dictionaries(
    {"text": st.text(max_size=4)},
    optional={
        "times": st.one_of(st.none(), st.integers(0, 3)),
        "seed": st.one_of(st.none(), st.text(max_size=2), st.integers()),
    },
)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(set(CASES) - {"swallow"})), values)
def test_property_any_input_ends_the_same_both_ways(
    drivers: dict[str, SdkDriver], name: str, value: dict[str, Any]
) -> None:
    fast, slow = both(drivers[name], value)
    assert fast == slow
