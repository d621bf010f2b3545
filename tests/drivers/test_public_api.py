"""The public surface of flightdeck.drivers is exactly these names."""

from __future__ import annotations

import flightdeck.drivers as drivers


def test_public_names_are_pinned() -> None:
    assert drivers.__all__ == sorted(drivers.__all__)
    assert set(drivers.__all__) == {
        "CallResult",
        "Candidate",
        "CodeDigest",
        "CodeDigestError",
        "Driver",
        "DriverCallError",
        "DriverChoice",
        "DriverEntryView",
        "DriverError",
        "DriverInspectReport",
        "DriverNotRunnable",
        "DriverRegistrationError",
        "FunctionDriver",
        "Rejection",
        "SdkBinding",
        "SdkDriver",
        "ToolBinding",
        "call_tool",
        "check_document",
        "defineDriver",
        "define_driver",
        "digest_of",
        "discover_drivers",
        "driver_code",
        "inspect_driver",
        "load_driver",
        "record_mismatch",
        "resolve_driver",
        "select_driver",
        "stream_tool",
    }
    for name in drivers.__all__:
        assert getattr(drivers, name) is not None


def test_sdk_driver_satisfies_the_driver_seam() -> None:
    import asyncio

    fd = drivers.FunctionDriver("x", {"t.echo": lambda value, context: {"got": value}})
    assert isinstance(fd, drivers.Driver)
    assert fd.id == "x"
    assert fd.binding("t.absent") is None
    binding = fd.binding("t.echo")
    assert binding is not None and binding.tool_id == "t.echo" and not binding.streaming
    assert asyncio.run(fd.invoke("t.echo", {"a": 1}, {})) == {"got": {"a": 1}}
