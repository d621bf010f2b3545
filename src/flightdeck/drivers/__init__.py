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

from flightdeck.drivers._check import check_document
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
from flightdeck.drivers._seam import (
    CallResult,
    Driver,
    FunctionDriver,
    ToolBinding,
    call_tool,
    stream_tool,
)

__all__ = [
    "CallResult",
    "Candidate",
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
    "discover_drivers",
    "inspect_driver",
    "load_driver",
    "resolve_driver",
    "select_driver",
    "stream_tool",
]
