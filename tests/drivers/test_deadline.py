"""`within` (the timer armed on the first suspension) behaves as `asyncio.timeout`."""

from __future__ import annotations

import asyncio
import dataclasses
import types
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.drivers import DriverCallError, FunctionDriver, ToolBinding, call_tool
from flightdeck.drivers._deadline import within

Step = tuple[str, int]
Trace = list[Any]


async def reference(call: Awaitable[Any], seconds: float) -> Any:
    """What `within` replaces."""
    async with asyncio.timeout(seconds):
        return await call


def _resolve(future: asyncio.Future[Any], value: Any, fail: bool) -> None:
    if not future.done():  # a timeout may have cancelled the waiter already
        future.set_exception(ValueError(value)) if fail else future.set_result(value)


async def scripted(steps: list[Step], trace: Trace) -> Any:
    """A call that suspends (or not) as `steps` say and records what it saw."""
    loop = asyncio.get_running_loop()
    try:
        for kind, n in steps:
            if kind == "sleep0":
                await asyncio.sleep(0)
            elif kind in ("result", "fail"):
                future: asyncio.Future[Any] = loop.create_future()
                loop.call_soon(_resolve, future, n, kind == "fail")
                try:
                    trace.append(("got", await future))
                except ValueError as exc:
                    trace.append(("caught", str(exc)))
            elif kind == "swallow":  # a package that ignores cancellation once
                try:
                    await asyncio.sleep(0)
                except asyncio.CancelledError:
                    trace.append(("swallowed",))
            elif kind == "raise":
                raise ValueError(n)
            elif kind == "timeout_error":
                raise TimeoutError(n)
            elif kind == "return":
                return n
        return "end"
    except asyncio.CancelledError:
        trace.append(("cancelled",))
        raise
    finally:
        trace.append(("closed",))


async def outcome(
    run: Callable[[Awaitable[Any], float], Awaitable[Any]], steps: list[Step], seconds: float
) -> tuple[Any, Trace]:
    trace: Trace = []
    try:
        result: Any = ("return", await run(scripted(steps, trace), seconds))
    except (ValueError, TimeoutError) as exc:
        result = ("raise", type(exc).__name__, str(exc))
    return result, trace


steps = st.lists(
    st.tuples(
        st.sampled_from(
            ["sleep0", "result", "fail", "swallow", "raise", "timeout_error", "return"]
        ),
        st.integers(0, 3),
    ),
    max_size=6,
)


@settings(deadline=None)
@given(script=steps, seconds=st.sampled_from([0.0, -1.0, 30.0]))
def test_property_within_matches_asyncio_timeout(script: list[Step], seconds: float) -> None:
    """Same value or error, and the same things seen by the call, for calls that finish
    at once, suspend, fail, swallow a cancellation, or meet an expired deadline."""

    async def both() -> tuple[Any, Any]:
        return await outcome(reference, script, seconds), await outcome(within, script, seconds)

    expected, got = asyncio.run(both())
    assert got == expected


@pytest.mark.parametrize("run", [reference, within])
def test_deadline_passing_at_a_later_suspension_cancels_the_call(
    run: Callable[[Awaitable[Any], float], Awaitable[Any]],
) -> None:
    trace: Trace = []

    async def call() -> None:
        await asyncio.sleep(0)
        trace.append("resumed")
        await asyncio.get_running_loop().create_future()  # never done

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await run(call(), 0.25)

    asyncio.run(main())
    assert trace == ["resumed"]


def test_a_call_that_never_suspends_arms_no_timer() -> None:
    async def main() -> int:
        loop: Any = asyncio.get_running_loop()
        before = len(loop._scheduled)
        value = await within(scripted([("return", 7)], []), 30.0)
        assert len(loop._scheduled) == before
        return value

    assert asyncio.run(main()) == 7


def test_cancelling_the_caller_cancels_the_call_not_a_timeout() -> None:
    trace: Trace = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        hang: asyncio.Future[Any] = loop.create_future()

        async def call() -> None:
            try:
                await asyncio.sleep(0)
                await hang
            finally:
                trace.append("closed")

        task = asyncio.ensure_future(within(call(), 30.0))
        for _ in range(3):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert trace == ["closed"]


def test_closing_the_caller_closes_the_call() -> None:
    trace: Trace = []

    async def call() -> None:
        try:
            await asyncio.sleep(0)
        finally:
            trace.append("closed")

    async def main() -> None:
        inner = call()  # held here: only the close, not garbage collection, may close it
        outer = within(inner, 30.0)
        outer.send(None)  # suspended inside the call
        outer.close()
        assert trace == ["closed"]

    asyncio.run(main())


def test_what_the_caller_sends_in_and_throws_in_reaches_the_call() -> None:
    """Delegation both ways at every suspension (asyncio itself sends only None)."""

    @types.coroutine
    def ask(question: str) -> Generator[str, Any, Any]:
        return (yield question)

    async def call() -> Any:
        first = await ask("first")
        try:
            await ask("second")
        except KeyError as exc:
            return (first, exc.args[0], await ask("third"))
        return None

    async def main() -> None:
        outer = within(call(), 30.0)
        assert outer.send(None) == "first"
        assert outer.send(1) == "second"
        assert outer.throw(KeyError("k")) == "third"
        with pytest.raises(StopIteration) as done:
            outer.send(3)
        assert done.value.value == (1, "k", 3)

    asyncio.run(main())


@pytest.mark.parametrize("suspend", [False, True])
def test_call_tool_reports_a_timeout_error_as_driver_timeout_either_way(suspend: bool) -> None:
    """As before: a TimeoutError out of the call (raised or by the deadline) is
    `driver_timeout`, whether or not the call had suspended first."""

    async def handler(value: Any, context: Any) -> Any:
        if suspend:
            await asyncio.sleep(0)
        raise TimeoutError("inner")

    driver = TimedDriver("d", {"t.x": handler})

    async def main() -> None:
        with pytest.raises(DriverCallError) as info:
            await call_tool("t.x", {}, driver=driver)
        assert info.value.code == "driver_timeout"
        assert info.value.message == "t.x did not finish within 1000 ms"

    asyncio.run(main())


class TimedDriver(FunctionDriver):
    def binding(self, tool_id: str) -> ToolBinding | None:
        found = super().binding(tool_id)
        return None if found is None else dataclasses.replace(found, timeout_ms=1000)


def test_call_tool_never_times_out_a_call_that_does_not_suspend() -> None:
    """docs/drivers.md: the deadline can only act at a suspension (as with a plain
    `asyncio.timeout`); here it has passed before the call starts (0 ms)."""

    async def handler(value: Any, context: Any) -> Any:
        return value["n"] + 1

    async def main() -> Any:
        driver = ZeroTimeoutDriver("d", {"t.x": handler})
        assert driver.binding("t.x").timeout_ms == 0  # type: ignore[union-attr]
        return (await call_tool("t.x", {"n": 1}, driver=driver)).output

    assert asyncio.run(main()) == 2


class ZeroTimeoutDriver(FunctionDriver):
    def binding(self, tool_id: str) -> ToolBinding | None:
        found = super().binding(tool_id)
        return None if found is None else dataclasses.replace(found, timeout_ms=0)
