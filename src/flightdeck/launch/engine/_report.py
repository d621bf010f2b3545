"""What `flightdeck runs show` and `runs list` print: the journal's view of a
run (steps with timings and status, approvals, outputs) plus its audit
records, in the same shape as stored; and `runs outputs`, which writes a
run's outputs into a folder from the store, on any machine that reads it."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from flightdeck.audit import AuditReader
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._journal import Journal
from flightdeck.launch.engine._output_store import pieces
from flightdeck.launch.engine._outputs import confined_path


def _duration_ms(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    began = datetime.fromisoformat(start.replace("Z", "+00:00"))
    ended = datetime.fromisoformat(end.replace("Z", "+00:00"))
    return round((ended - began).total_seconds() * 1000, 3)


def run_report(run_id: str, journal: Journal, audit: AuditReader | None) -> dict[str, Any]:
    row = journal.run(run_id)
    if row is None:
        raise LaunchError("runs.unknown", f"no run {run_id} in {journal.location}")
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
    report = {
        **row.to_dict(),
        "steps": steps,
        "approvals": approvals,
        "outputs": journal.outputs(run_id),
        "audit": records,
    }
    # A Temporal run's `source` inputs join its row once a worker has read
    # them; until then the report names them instead of leaving them out.
    deferred = row.options.get("inputs_read_on_worker") or []
    pending = [name for name in deferred if name not in row.inputs]
    if pending and row.status == "running":
        report["inputs_pending"] = pending
    return report


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


def write_outputs(run_id: str, journal: Journal, out_dir: Path) -> list[dict[str, Any]]:
    """Write each output of `run_id` under `out_dir`, at its publish path
    (relative to the run's out dir), from the content the store keeps (its
    row, or its chunks reassembled), else from the file the run published
    when this machine has it; each checked against its recorded SHA-256.
    `output.not_in_store` for one this machine can get neither way,
    `output.chunk_missing` / `output.chunk_corrupt` for a damaged chunk.

    All or nothing: every output is staged in a temporary file beside its
    target first and renamed into place only once all are checked, so a
    failure leaves no output written, whole or in part."""
    row = journal.run(run_id)
    if row is None:
        raise LaunchError("runs.unknown", f"no run {run_id} in {journal.location}")
    recorded = row.options.get("out_dir")
    staged: list[tuple[Path, Path]] = []
    written = []
    try:
        for item in journal.output_contents(run_id):
            target = confined_path(out_dir, _relative(item, recorded))
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            staged.append((Path(name), target))
            with os.fdopen(fd, "wb") as handle:
                digest = hashlib.sha256()
                for data in _content(run_id, journal, item):
                    digest.update(data)
                    handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if digest.hexdigest() != item["sha256"]:
                raise LaunchError(
                    "output.changed",
                    f"output {item['name']!r} of run {run_id} is not what the run recorded"
                    f" (sha256 {item['sha256'][:16]}…)",
                )
            written.append({**item, "written": str(target)})
        for staged_at, target in staged:
            os.replace(staged_at, target)
    finally:
        for staged_at, _ in staged:
            staged_at.unlink(missing_ok=True)  # gone once renamed; else not left half-written
    return written


def _content(run_id: str, journal: Journal, item: dict[str, Any]) -> Iterator[bytes]:
    """What the store keeps of `item` (popping `content` and `chunks`), a
    piece at a time, or the file it was published to on this machine."""
    content, chunks = item.pop("content"), item.pop("chunks")
    name = item["name"]
    if chunks is not None:
        chunk = partial(journal.output_chunk, run_id, name)
        yield from pieces(run_id, name, int(chunks), chunk, journal.location)
        return
    data = content.encode("utf-8") if content is not None else _published(item)
    if data is None:
        raise LaunchError(
            "output.not_in_store",
            f"output {item['name']!r} of run {run_id} is neither in the store nor here"
            f" ({item['path']})",
            hint="outputs published to files are kept in the store only with a PostgreSQL"
            " store; fetch it from the machine that ran it",
        )
    yield data


def _published(item: dict[str, Any]) -> bytes | None:
    path = item["path"]
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(int(item["bytes"]) + 1)  # one past: a grown file fails the hash
    except OSError:
        return None


def _relative(item: dict[str, Any], recorded: Any) -> str:
    """Where an output goes under the new folder: its path under the run's
    out dir, else its name."""
    if item["path"] and isinstance(recorded, str):
        try:
            return Path(item["path"]).relative_to(recorded).as_posix()
        except ValueError:
            pass
    return str(item["name"])
