"""The run journal's rows: the statements that write a step's row, and the
rows the journal returns, a run (`RunRow`) and its steps (`StepRow`), read
back from their stored columns. A stored value that is not what the journal
wrote is `journal.corrupt`, never a guess."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flightdeck._json import read_json
from flightdeck.launch.core._errors import LaunchError

# A step's row: journaled `started`, then finished (completed, failed, ...).
STEP_STARTED = (
    "INSERT INTO steps (run_id, step_id, kind, status, started_at, approval)"
    " VALUES (?, ?, ?, 'started', ?, ?) ON CONFLICT (run_id, step_id) DO UPDATE SET"
    " status = 'started', started_at = excluded.started_at, finished_at = NULL,"
    " error = NULL, approval = excluded.approval"
)
STEP_FINISHED = (
    "INSERT INTO steps (run_id, step_id, kind, status, finished_at, attempts, result,"
    " error, approval) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, step_id) DO UPDATE SET status = excluded.status,"
    " finished_at = excluded.finished_at, attempts = excluded.attempts,"
    " result = excluded.result, error = excluded.error,"
    " approval = COALESCE(excluded.approval, steps.approval)"
)
# Both of them in one block: the row `STEP_STARTED` then `STEP_FINISHED` leave (the
# kind is the start's; every other column is set by one or the other).
STEP_RAN = (
    "INSERT INTO steps (run_id, step_id, kind, status, started_at, finished_at, attempts,"
    " result, error, approval) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, step_id) DO UPDATE SET status = excluded.status,"
    " started_at = excluded.started_at, finished_at = excluded.finished_at,"
    " attempts = excluded.attempts, result = excluded.result, error = excluded.error,"
    " approval = excluded.approval"
)


# What `json.dumps(value, sort_keys=True, ensure_ascii=False)` uses, built
# once: with any keyword `json.dumps` builds a new encoder per call (two per step).
ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def dumps(value: Any) -> str:
    return ENCODER.encode(value)


@dataclass(frozen=True)
class StepRow:
    step_id: str
    kind: str
    status: str
    started_at: str | None
    finished_at: str | None
    attempts: int
    result: Any
    error: dict[str, Any] | None
    approval: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.step_id,
            "kind": self.kind,
            "status": self.status,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "attempts": self.attempts,
            "error": self.error,
            "approval": self.approval,
        }


@dataclass(frozen=True)
class RunRow:
    run_id: str
    plan_name: str
    plan_path: str
    content_hash: str | None
    status: str
    started_at: str
    finished_at: str | None
    launch_time: str
    inputs: dict[str, Any]
    options: dict[str, Any]
    error: dict[str, Any] | None
    executor: str | None = None  # local | temporal; None: recorded before it was kept
    cluster: dict[str, Any] | None = None  # temporal: address, namespace, task queues

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "plan": self.plan_name,
            "plan_path": self.plan_path,
            "content_hash": self.content_hash,
            "status": self.status,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "launch_time": self.launch_time,
            "inputs": self.inputs,
            "options": self.options,
            "error": self.error,
            "executor": self.executor,
            "cluster": self.cluster,
        }


# Journals written before the snake_case change stored these option names;
# a resumed old run must still find its out dir and replay source.
_LEGACY_OPTIONS = {
    "noSandbox": "no_sandbox",
    "replayOf": "replay_of",
    "outDir": "out_dir",
    "maxParallel": "max_parallel",
}


def _snake_options(options: Any) -> dict[str, Any]:
    if not isinstance(options, dict):
        raise LaunchError("journal.corrupt", "a run's stored options are not a JSON object")
    return {_LEGACY_OPTIONS.get(str(key), str(key)): value for key, value in options.items()}


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return read_json(text, depth=None)
    except ValueError:  # a row edited behind the journal's back
        raise LaunchError(
            "journal.corrupt",
            f"a stored value of the run journal is not JSON: {text[:40]!r}",
            hint="the journal was changed outside flightdeck; move it aside to start anew",
        ) from None


RUN_COLUMNS = (
    "run_id, plan_name, plan_path, content_hash, status, started_at, finished_at,"
    " launch_time, inputs, options, error, executor, cluster"
)


def run_row(row: tuple[Any, ...]) -> RunRow:
    return RunRow(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        _loads(row[8]),
        _snake_options(_loads(row[9])),
        _loads(row[10]),
        row[11],
        _cluster(_loads(row[12])),
    )


def step_row(row: tuple[Any, ...]) -> StepRow:
    return StepRow(
        row[0], row[1], row[2], row[3], row[4], row[5], _loads(row[6]), _loads(row[7]), row[8]
    )


def _cluster(value: Any) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise LaunchError("journal.corrupt", "a run's stored cluster is not a JSON object")
    return value
