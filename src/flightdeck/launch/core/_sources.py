"""A `source` input's read, from the action's result to the input's value.

Pure, and below the executors: the launcher uses it for a local read
(`launch._inputs`), the Temporal workflow for a read on a worker
(`launch.temporal._rounds`), so both record the read alike.
"""

from __future__ import annotations

from typing import Any

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._paths import select
from flightdeck.launch.core._values import summarize, value_hash


def source_read(
    name: str, ref: str | None, path: str | None, result: Any
) -> tuple[Any, dict[str, Any]]:
    """The value the read of input `name` (action `ref`, narrowed by `path`,
    its `select`) gives, and the read as `launch.run` records it
    (`source_reads`)."""
    value = select(result, path) if path else result
    read: dict[str, Any] = {
        "input": name,
        "action_ref": ref,
        "args": {},
        "select": path,
        "result_hash": value_hash(result),
        "result_summary": summarize(result),
    }
    return value, read


def violation(name: str, why: str | None) -> LaunchError | None:
    """`input.constraint` for one input's value (`why`: `Input.violation`),
    worded as the launcher words it for all inputs at once."""
    if why is None:
        return None
    return LaunchError(
        "input.constraint",
        f"input(s) break their constraint: {name}: {why}",
        hint="pass a value the input's constraint (enum or pattern) allows",
    )
