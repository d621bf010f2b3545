"""What `flightdeck runs show` and `runs list` print: the journal's view of a
run (steps with timings and status, approvals, outputs) plus its audit
records, in the same shape as stored."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flightdeck.audit import AuditReader
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._journal import Journal


def _duration_ms(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    began = datetime.fromisoformat(start.replace("Z", "+00:00"))
    ended = datetime.fromisoformat(end.replace("Z", "+00:00"))
    return round((ended - began).total_seconds() * 1000, 3)


def run_report(run_id: str, journal: Journal, audit: AuditReader | None) -> dict[str, Any]:
    row = journal.run(run_id)
    if row is None:
        raise LaunchError("runs.unknown", f"no run {run_id} in {journal.path}")
    steps = []
    for step in journal.steps(run_id):
        entry = step.to_dict()
        entry["duration_ms"] = _duration_ms(step.started_at, step.finished_at)
        steps.append(entry)
    approvals = [
        {"step": step["id"], "decision": step["approval"]}
        for step in steps
        if step["approval"] not in (None, "not-required")
    ]
    records = [record.to_dict() for record in audit.records(run_id=run_id)] if audit else []
    return {
        **row.to_dict(),
        "steps": steps,
        "approvals": approvals,
        "outputs": journal.outputs(run_id),
        "audit": records,
    }


def run_list(journal: Journal, limit: int = 50) -> list[dict[str, Any]]:
    return [
        {
            "run_id": row.run_id,
            "plan": row.plan_name,
            "status": row.status,
            "started_at": row.started_at,
            "finished_at": row.finished_at,
        }
        for row in journal.runs(limit)
    ]
