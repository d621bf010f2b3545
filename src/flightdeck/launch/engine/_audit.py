"""Route the run's audit records to their sinks.

Every record goes to the default sink (SQLite in the user data dir unless
the host passes another). A record of an action call carries its contract's
`audit.sink` reference; when the configuration maps that reference
(`[audit.sinks]` in config: `"audit/metrics-reads" = "jsonl:/var/log/m.jsonl"`
or `"sqlite:/path.db"`), the record is written there too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flightdeck.audit import AuditRecord, AuditSink, JsonlAuditSink, SQLiteAuditSink
from flightdeck.launch.core._errors import LaunchError


def sink_from_spec(spec: str) -> AuditSink:
    scheme, _, where = spec.partition(":")
    if scheme == "jsonl" and where:
        return JsonlAuditSink(Path(where).expanduser())
    if scheme == "sqlite" and where:
        return SQLiteAuditSink(Path(where).expanduser())
    raise LaunchError("audit.sink_invalid", f"audit sink {spec!r}: use jsonl:PATH or sqlite:PATH")


class AuditRouter:
    def __init__(self, default: AuditSink, named: Mapping[str, AuditSink] | None = None) -> None:
        self.default = default
        self.named = dict(named or {})

    @classmethod
    def configured(cls, default: AuditSink, config: Mapping[str, Any]) -> AuditRouter:
        return cls(default, {ref: sink_from_spec(str(spec)) for ref, spec in config.items()})

    def write(self, run_id: str, kind: str, fields: Mapping[str, Any]) -> None:
        record = AuditRecord(kind, run_id, dict(fields))
        self.default.record(record)
        reference = fields.get("sink")
        if isinstance(reference, str) and reference in self.named:
            self.named[reference].record(record)
