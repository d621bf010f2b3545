"""The hand-written side of bench/temporal_store.py: a plain temporalio
workflow running the bench plan's ten steps as ten activities in a chain
(an echo, then an identity, five times), what a team would write without
flightdeck. In a module of its own so the worker's workflow sandbox can
import it again.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

QUEUE = "bench-raw"
_TIMEOUT = timedelta(seconds=60)


@activity.defn(name="bench.echo")
async def echo(value: str) -> str:
    return value


@activity.defn(name="bench.identity")
async def identity(value: str) -> str:
    return value


@workflow.defn(name="bench.Chain")
class Chain:
    @workflow.run
    async def run(self, seed: str) -> str:
        value = seed
        for _ in range(5):
            value = await workflow.execute_activity(echo, value, start_to_close_timeout=_TIMEOUT)
            value = await workflow.execute_activity(
                identity, value, start_to_close_timeout=_TIMEOUT
            )
        return value
