"""`within`: `asyncio.timeout` around an await, with the timer armed only on suspension.

A call that finishes without ever suspending gives the event loop no chance to
cancel it, so it cannot time out; for such a call (an in-process SDK function
often is one) arming and cancelling the timer costs more (~5 us) than the rest
of the call. So the awaitable runs up to its first suspension first, and only
then is the rest awaited under `asyncio.timeout_at` of the deadline taken at
the start: the same deadline, and the same outcome, as the plain form.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Generator
from typing import Any, TypeVar

__all__ = ["within"]

T = TypeVar("T")


async def within(call: Awaitable[T], seconds: float) -> T:
    """`async with asyncio.timeout(seconds): return await call`, raising `TimeoutError`
    alike, without a timer while the call has not suspended."""
    deadline = asyncio.get_running_loop().time() + seconds
    steps = call.__await__()
    try:
        suspended = steps.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    async with asyncio.timeout_at(deadline):
        return await _Resumed(steps, suspended)


class _Resumed(Awaitable[T]):
    """The rest of an await that already ran to its first suspension: what `await`
    (PEP 380 delegation) does from there, starting by passing that suspension up."""

    __slots__ = ("steps", "suspended")

    def __init__(self, steps: Generator[Any, Any, T], suspended: Any) -> None:
        self.steps, self.suspended = steps, suspended

    def __await__(self) -> Generator[Any, Any, T]:
        steps, suspended = self.steps, self.suspended
        while True:
            try:
                sent = yield suspended
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # a cancellation or a failed future: the call's
                try:
                    suspended = steps.throw(exc)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
            else:
                try:
                    suspended = steps.send(sent)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
