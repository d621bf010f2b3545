"""Where a run goes: which executor walks it and, on Temporal, which cluster.

A new run goes where the flags say, else the `[temporal]` configuration. A
recorded run (a resume, `runs approve`, `runs show`) goes where the journal
says it lives: the flags still win (a cluster reached at a new address), the
run's record comes next, the configuration last (a run this journal does not
hold, or one recorded before executors were). A configuration that changed
since the launch therefore never sends a run elsewhere; a flag that names
another executor than the run's is refused by the launch
(`resume.executor_mismatch`), and another cluster that has no history of the
run by the Temporal client (`temporal.run_not_found`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flightdeck.launch.core._errors import LaunchError

if TYPE_CHECKING:  # the launch imports this module: types only
    from flightdeck.launch.engine._rows import RunRow
    from flightdeck.launch.engine._runtime import RunEngine

_KEYS = ("address", "namespace", "task_queue", "tool_task_queue")


@dataclass(frozen=True)
class TemporalSettings:
    """Where Temporal runs go: flags first, then `[temporal]`."""

    executor: str = "local"
    address: str | None = None
    task_queue: str = "flightdeck"
    tool_task_queue: str | None = None
    namespace: str = "default"
    heartbeat_timeout: float = 30.0
    sticky_timeout: float = 10.0  # a worker's sticky queue schedule-to-start timeout


def route(
    row: RunRow | None,
    config: TemporalSettings,
    *,
    executor: str | None = None,
    **flags: str | None,
) -> TemporalSettings:
    """`config` with the run's record and then the flags (`address`,
    `namespace`, `task_queue`, `tool_task_queue`; None: not given) over it."""
    unknown = set(flags) - set(_KEYS)
    if unknown:
        raise TypeError(f"route() got unknown flags {sorted(unknown)}")
    values: dict[str, Any] = {}
    if row is not None and row.executor is not None:
        # A recorded run: its executor, not the configured default for new runs.
        values["executor"] = row.executor
        if row.executor == "temporal":
            recorded = row.cluster or {}
            values |= {key: recorded[key] for key in _KEYS if recorded.get(key) is not None}
            if "tool_task_queue" in recorded:  # None recorded: tool steps on the task queue
                values["tool_task_queue"] = recorded["tool_task_queue"]
    if executor is not None:
        values["executor"] = executor
    values |= {key: value for key, value in flags.items() if value is not None}
    return replace(config, **values)


def check_executor(previous: RunRow, engine: RunEngine | None) -> None:
    """A run resumes on the executor it was launched with: a Temporal run's
    workflow may still be open (a local walk would repeat its writes), and a
    local run has no workflow to ask. Runs recorded before executors were
    (`executor` None) resume where the caller says, as they always did."""
    wanted = engine.executor if engine is not None else "local"
    if previous.executor is None or previous.executor == wanted:
        return
    run_id = previous.run_id
    if previous.executor == "temporal":
        address = str((previous.cluster or {}).get("address") or "HOST:PORT")
        argv = ["--executor", "temporal", "--temporal", address]
    else:
        argv = ["--executor", "local"]
    raise LaunchError(
        "resume.executor_mismatch",
        f"run {run_id} was launched on the {previous.executor} executor, not {wanted}; it"
        " resumes only there",
        hint="resume it there: " + shlex.join(["flightdeck", "launch", "--resume", run_id, *argv]),
    )
