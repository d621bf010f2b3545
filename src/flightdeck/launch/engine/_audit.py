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
from typing import TYPE_CHECKING, Any

from flightdeck.audit import AuditRecord, AuditSink, JsonlAuditSink, SQLiteAuditSink
from flightdeck.launch.core._errors import LaunchError

if TYPE_CHECKING:
    from flightdeck.launch.engine._journal import Journal


def sink_from_spec(spec: str) -> AuditSink:
    scheme, _, where = spec.partition(":")
    if scheme == "jsonl" and where:
        return JsonlAuditSink(Path(where).expanduser())
    if scheme == "sqlite" and where:
        return SQLiteAuditSink(Path(where).expanduser())
    raise LaunchError("audit.sink_invalid", f"audit sink {spec!r}: use jsonl:PATH or sqlite:PATH")


class AuditRouter:
    """`journal`: the run journal whose open `batch()` takes the default
    sink's records into its transaction when both are in one PostgreSQL
    database (`_joined`)."""

    def __init__(
        self,
        default: AuditSink,
        named: Mapping[str, AuditSink] | None = None,
        journal: Journal | None = None,
    ) -> None:
        self.default = default
        self.named = dict(named or {})
        self.journal = journal

    @classmethod
    def configured(cls, default: AuditSink, config: Mapping[str, Any]) -> AuditRouter:
        return cls(default, {ref: sink_from_spec(str(spec)) for ref, spec in config.items()})

    def write(self, run_id: str, kind: str, fields: Mapping[str, Any]) -> None:
        record = AuditRecord(kind, run_id, dict(fields))
        if not self._joined(record):
            self.default.record(record)
        reference = fields.get("sink")
        if isinstance(reference, str) and reference in self.named:
            self.named[reference].record(record)

    def joins(self) -> bool:
        """Whether a record written inside the journal's `batch()` commits
        with it (`_joined`): the default sink is the PostgreSQL audit store in
        the journal's database."""
        from flightdeck.audit._postgres import PostgresAuditSink

        journal, sink = self.journal, self.default
        if journal is None or not isinstance(sink, PostgresAuditSink):
            return False
        return journal.url == sink.url

    def _joined(self, record: AuditRecord) -> bool:
        """Written with the journal's open round: the default sink is the
        PostgreSQL audit store in the journal's database, so the record
        commits with the round's rows, in their pipeline, instead of on a
        connection and round trip of its own."""
        from flightdeck.audit._postgres import PostgresAuditSink

        journal, sink = self.journal, self.default
        if journal is None or not isinstance(sink, PostgresAuditSink) or not self.joins():
            return False
        return journal.join(lambda: sink.insert(record))
