"""The audit record and the sink protocol every audit store implements."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable


def utc_now() -> str:
    """An RFC 3339 UTC timestamp with microseconds (sortable as text)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class AuditRecord:
    """One audited event.

    `kind` is a stable dotted name (`io.stage`, `io.sync`, `io.stage_failed`,
    `io.sync_failed`, `io.output_missing`, ...); `run_id` ties the record to
    a run (None for events outside a run); `fields` is plain JSON data.
    """

    kind: str
    run_id: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    timestamp: str = field(default_factory=utc_now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "run_id": self.run_id,
            "timestamp": self.timestamp,
            "fields": dict(self.fields),
        }

    @classmethod
    def from_dict(cls, data: object) -> AuditRecord:
        """The record `to_dict` wrote; `ValueError` for anything else (a foreign
        or hand-edited line must not become a record with a list for a run id)."""
        if not isinstance(data, dict):
            raise ValueError("an audit record is a JSON object")
        kind, run_id = data.get("kind"), data.get("run_id")
        fields, timestamp = data.get("fields", {}), data.get("timestamp")
        if not isinstance(kind, str):
            raise ValueError("an audit record needs a `kind` string")
        if not isinstance(timestamp, str):
            raise ValueError("an audit record needs a `timestamp` string")
        if run_id is not None and not isinstance(run_id, str):
            raise ValueError("`run_id` is a string or null")
        if not isinstance(fields, dict):
            raise ValueError("`fields` is a JSON object")
        return cls(kind=kind, run_id=run_id, fields=fields, timestamp=timestamp)


@runtime_checkable
class AuditSink(Protocol):
    """Where audit records go. `record` must not raise for a well-formed record
    on a healthy store; it is called from hot paths (file staging, tool calls)."""

    def record(self, event: AuditRecord) -> None: ...


@runtime_checkable
class AuditReader(Protocol):
    """A sink that can also list what it stored, oldest first."""

    def records(self, run_id: str | None = None, kind: str | None = None) -> list[AuditRecord]: ...
