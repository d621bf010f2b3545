"""In-process SDK drivers (AIP-30 DRIVER.md, AIP-33 `kind: sdk`).

    driver = load_driver(".drivers/openai-sdk")               # registered, or refused with reasons
    result = await call_tool("chat.completion", {"messages": [...]}, driver=driver)
    async for chunk in stream_tool("chat.stream", {...}, driver=driver): ...
    choice = resolve_driver("chat.completion", discover_drivers(ws), require_tags=["pii-safe"])

Errors: `DriverRegistrationError` (`DriverNotRunnable`) at registration and
`DriverCallError` per call, each with a stable `code` (see `_errors.py`).
`check_document` is the hook `flightdeck validate` calls for DRIVER documents;
`inspect_driver` is the view `flightdeck inspect` prints (manifests only).
"""

from __future__ import annotations

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
    from flightdeck.drivers._binding import Driver, ToolBinding
    from flightdeck.drivers._check import check_document
    from flightdeck.drivers._digest import (
        CodeDigest,
        CodeDigestError,
        digest_of,
        driver_code,
        record_mismatch,
    )
    from flightdeck.drivers._errors import (
        DriverCallError,
        DriverError,
        DriverNotRunnable,
        DriverRegistrationError,
    )
    from flightdeck.drivers._inspect import DriverEntryView, DriverInspectReport, inspect_driver
    from flightdeck.drivers._register import define_driver, defineDriver, load_driver
    from flightdeck.drivers._resolve import (
        Candidate,
        DriverChoice,
        Rejection,
        discover_drivers,
        resolve_driver,
        select_driver,
    )
    from flightdeck.drivers._sdk import SdkBinding, SdkDriver
    from flightdeck.drivers._seam import CallResult, FunctionDriver, call_tool, stream_tool

_LAZY: dict[str, tuple[str, str]] = {
    "check_document": ("flightdeck.drivers._check", "check_document"),
    "CodeDigest": ("flightdeck.drivers._digest", "CodeDigest"),
    "CodeDigestError": ("flightdeck.drivers._digest", "CodeDigestError"),
    "digest_of": ("flightdeck.drivers._digest", "digest_of"),
    "driver_code": ("flightdeck.drivers._digest", "driver_code"),
    "record_mismatch": ("flightdeck.drivers._digest", "record_mismatch"),
    "DriverCallError": ("flightdeck.drivers._errors", "DriverCallError"),
    "DriverError": ("flightdeck.drivers._errors", "DriverError"),
    "DriverNotRunnable": ("flightdeck.drivers._errors", "DriverNotRunnable"),
    "DriverRegistrationError": ("flightdeck.drivers._errors", "DriverRegistrationError"),
    "DriverEntryView": ("flightdeck.drivers._inspect", "DriverEntryView"),
    "DriverInspectReport": ("flightdeck.drivers._inspect", "DriverInspectReport"),
    "inspect_driver": ("flightdeck.drivers._inspect", "inspect_driver"),
    "define_driver": ("flightdeck.drivers._register", "define_driver"),
    "defineDriver": ("flightdeck.drivers._register", "defineDriver"),
    "load_driver": ("flightdeck.drivers._register", "load_driver"),
    "Candidate": ("flightdeck.drivers._resolve", "Candidate"),
    "DriverChoice": ("flightdeck.drivers._resolve", "DriverChoice"),
    "Rejection": ("flightdeck.drivers._resolve", "Rejection"),
    "discover_drivers": ("flightdeck.drivers._resolve", "discover_drivers"),
    "resolve_driver": ("flightdeck.drivers._resolve", "resolve_driver"),
    "select_driver": ("flightdeck.drivers._resolve", "select_driver"),
    "SdkBinding": ("flightdeck.drivers._sdk", "SdkBinding"),
    "SdkDriver": ("flightdeck.drivers._sdk", "SdkDriver"),
    "CallResult": ("flightdeck.drivers._seam", "CallResult"),
    "Driver": ("flightdeck.drivers._binding", "Driver"),
    "FunctionDriver": ("flightdeck.drivers._seam", "FunctionDriver"),
    "ToolBinding": ("flightdeck.drivers._binding", "ToolBinding"),
    "call_tool": ("flightdeck.drivers._seam", "call_tool"),
    "stream_tool": ("flightdeck.drivers._seam", "stream_tool"),
}


__all__ = [
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
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
