"""The driver seam: what a host needs to call a tool through any driver.

    result = await call_tool("chat.completion", {"messages": [...]}, driver=drv,
                             context={"workspace": "/ws"})
    async for chunk in stream_tool("chat.stream", {...}, driver=drv): ...

A `Driver` (defined in `_binding.py`) is as narrow as a transport: it names
the tools it binds (each a `ToolBinding`: the contract's IO, dropped inputs,
whether it streams) and invokes one with already-validated input.
`call_tool` / `stream_tool` own the contract: validate the input against the
TOOL's inputs (refusing dropped inputs), invoke, validate the output, and
audit the call (never its values).
`FunctionDriver` is the handler-backed driver for tests and host built-ins.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flightdeck.audit import AuditRecord, AuditSink
from flightdeck.drivers._binding import Driver, ToolBinding
from flightdeck.drivers._deadline import within
from flightdeck.drivers._errors import (
    INPUT_INVALID,
    OUTPUT_INVALID,
    DriverCallError,
    DriverError,
)
from flightdeck.io import Err, IOHandle
from flightdeck.tools import ToolHandle

DROPPED_INPUT_USED = "dropped_input_used"
TOOL_NOT_IMPLEMENTED = "tool_not_implemented"
DRIVER_TIMEOUT = "driver_timeout"
NO_DRIVER = "no_driver"


@dataclass(frozen=True)
class CallResult:
    """The outcome of one call: plain JSON data, serializable as is."""

    tool: str
    driver: str
    output: Any
    duration_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "driver": self.driver,
            "output": self.output,
            "duration_ms": round(self.duration_ms, 3),
        }


def _choose(
    tool: str,
    driver: Driver | None,
    drivers: Sequence[Any],
    require_tags: Sequence[str],
    region: str | None,
    input: Any,
) -> Driver:
    if driver is not None:
        return driver
    # Imported here: the resolver imports registration (manifests, packages),
    # which a call with its driver in hand never needs.
    from flightdeck.drivers._resolve import resolve_driver

    choice = resolve_driver(tool, drivers, require_tags=require_tags, region=region, input=input)
    if choice.driver is None:
        raise DriverCallError(NO_DRIVER, f"{tool}: {choice.reason}", details=choice.to_dict())
    return choice.driver


def _binding(driver: Driver, tool_id: str) -> ToolBinding:
    found = driver.binding(tool_id)
    if found is None:
        raise DriverCallError(
            TOOL_NOT_IMPLEMENTED, f"driver {driver.id} does not implement tool {tool_id!r}"
        )
    return found


def check_input(binding: ToolBinding, value: Any) -> None:
    """The TOOL's inputs schema, then AIP-30's rule: a dropped input is refused, not ignored."""
    fast = binding.fast_input
    if fast is None or not fast(value):  # the accept path skips the verdict's type check
        checked = binding.io.validate_input(value)
        if isinstance(checked, Err):
            pointer = checked.error.split(":", 1)[0] if checked.error.startswith("/") else ""
            raise DriverCallError(
                INPUT_INVALID, f"input of {binding.tool_id}: {checked.error}", pointer=pointer
            )
    if binding.dropped_inputs and isinstance(value, Mapping):
        used = sorted(binding.dropped_inputs.intersection(value))
        if used:
            raise DriverCallError(
                DROPPED_INPUT_USED,
                f"this driver drops input(s) {', '.join(used)} of {binding.tool_id}",
                pointer="/" + used[0],
                hint="remove them or pick a driver that supports them",
            )


def check_output(binding: ToolBinding, value: Any) -> None:
    fast = binding.fast_output
    if fast is not None and fast(value):
        return
    checked = binding.io.validate_output(value)
    if isinstance(checked, Err):
        pointer = checked.error.split(":", 1)[0] if checked.error.startswith("/") else ""
        raise DriverCallError(
            OUTPUT_INVALID, f"output of {binding.tool_id}: {checked.error}", pointer=pointer
        )


async def _within(binding: ToolBinding, call: Awaitable[Any]) -> Any:
    timeout_ms = binding.timeout_ms or 0
    try:
        return await within(call, timeout_ms / 1000)
    except TimeoutError:
        raise DriverCallError(
            DRIVER_TIMEOUT,
            f"{binding.tool_id} did not finish within {timeout_ms} ms",
            hint="a sync function keeps running in its worker thread until it returns",
        ) from None


def _fields(tool: str, driver: Driver, **outcome: Any) -> dict[str, Any]:
    return {"tool": tool, "driver": driver.id, "kind": driver.kind, **outcome}


def _audit(
    sink: AuditSink | None,
    run_id: str | None,
    kind: str,
    fields: dict[str, Any],
) -> None:
    if sink is not None:
        sink.record(AuditRecord(kind, run_id, fields))


def _fire(tool: ToolHandle, driver_id: str, run_id: str | None, audit: AuditSink | None) -> None:
    """The merged view's `fires_events`: the action's, plus any the implementor
    adds (narrowing guarantees none is dropped). Fired once the call succeeded."""
    from flightdeck.audit import fire

    fields = {"action": tool.view.action_id, "tool": tool.id, "driver": driver_id}
    for name in tool.view.fires_events:
        fire(name, source="driver.call", run_id=run_id, fields=fields, audit=audit)


async def call_tool(
    tool: str,
    input: Any,
    *,
    driver: Driver | None = None,
    drivers: Sequence[Any] = (),
    require_tags: Sequence[str] = (),
    region: str | None = None,
    context: Mapping[str, Any] | None = None,
    audit: AuditSink | None = None,
    run_id: str | None = None,
) -> CallResult:
    """Call one tool through `driver`, or through the driver `resolve_driver` picks among
    `drivers` (Candidates or Drivers) for `require_tags` / `region`. Raises
    `DriverCallError` (typed by `code`; `no_driver` when nothing qualifies)."""
    driver = _choose(tool, driver, drivers, require_tags, region, input)
    binding = _binding(driver, tool)
    started = time.perf_counter()
    try:
        check_input(binding, input)
        if binding.timeout_ms is None:
            output = await driver.invoke(tool, input, context or {})
        else:
            output = await _within(binding, driver.invoke(tool, input, context or {}))
        check_output(binding, output)
    except DriverError as exc:
        fields = _fields(tool, driver, ok=False, code=exc.code, message=exc.message)
        _audit(audit, run_id, "driver.call", fields)
        raise
    elapsed = (time.perf_counter() - started) * 1000
    if audit is not None:  # the record's fields built only for a sink (~0.2 us a call)
        fields = _fields(tool, driver, ok=True, duration_ms=round(elapsed, 3))
        _audit(audit, run_id, "driver.call", fields)
    if binding.tool is not None and binding.tool.view.fires_events:
        _fire(binding.tool, driver.id, run_id, audit)
    return CallResult(tool, driver.id, output, elapsed)


async def stream_tool(
    tool: str,
    input: Any,
    *,
    driver: Driver | None = None,
    drivers: Sequence[Any] = (),
    require_tags: Sequence[str] = (),
    region: str | None = None,
    context: Mapping[str, Any] | None = None,
    audit: AuditSink | None = None,
    run_id: str | None = None,
) -> AsyncIterator[Any]:
    """Yield a tool's chunks as they come (driver chosen as in `call_tool`). Stopping
    early (`aclose()`) or cancelling closes the driver's stream and the package's
    generator."""
    driver = _choose(tool, driver, drivers, require_tags, region, input)
    binding = _binding(driver, tool)
    check_input(binding, input)
    fields: dict[str, Any] = {"tool": tool, "driver": driver.id, "kind": driver.kind}
    chunks = 0
    stream = driver.invoke_stream(tool, input, context or {})
    try:
        async for chunk in stream:
            chunks += 1
            yield chunk
    except DriverError as exc:
        fields.update(ok=False, code=exc.code, message=exc.message, chunks=chunks)
        _audit(audit, run_id, "driver.stream", fields)
        raise
    finally:
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()
    fields.update(ok=True, chunks=chunks)
    _audit(audit, run_id, "driver.stream", fields)
    if binding.tool is not None and binding.tool.view.fires_events:
        _fire(binding.tool, driver.id, run_id, audit)


Handler = Callable[[Any, Mapping[str, Any]], Any]


@dataclass
class FunctionDriver:
    """A driver backed by plain handlers `handler(input, context)` (sync, async, or
    async generators for streaming tools). For tests and host built-ins."""

    id: str
    handlers: Mapping[str, Handler]
    contracts: Mapping[str, ToolHandle | IOHandle] = field(default_factory=dict)
    kind: str = "builtin"
    policy_tags: tuple[str, ...] = ()
    region: tuple[str, ...] = ("global",)
    dropped: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def binding(self, tool_id: str) -> ToolBinding | None:
        if tool_id not in self.handlers:
            return None
        contract = self.contracts.get(tool_id)
        io = contract.io if isinstance(contract, ToolHandle) else contract or IOHandle()
        handler = self.handlers[tool_id]
        tool = contract if isinstance(contract, ToolHandle) else None
        return ToolBinding(
            tool_id,
            io,
            self.dropped.get(tool_id, frozenset()),
            inspect.isasyncgenfunction(handler),
            tool,
            timeout_ms=tool.timeout_ms if tool is not None else None,
        )

    async def invoke(self, tool_id: str, input: Any, context: Mapping[str, Any]) -> Any:
        result = self.handlers[tool_id](input, context)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def invoke_stream(
        self, tool_id: str, input: Any, context: Mapping[str, Any]
    ) -> AsyncIterator[Any]:
        produced = self.handlers[tool_id](input, context)
        if inspect.isawaitable(produced):
            produced = await _awaited(produced)
        if not hasattr(produced, "__aiter__"):
            yield produced
            return
        try:
            async for chunk in produced:
                yield chunk
        finally:
            closer = getattr(produced, "aclose", None)
            if closer is not None:
                await closer()


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
