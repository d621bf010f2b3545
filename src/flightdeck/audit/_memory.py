"""An in-memory sink, for tests and for callers that collect then forward."""

from __future__ import annotations

import threading

from flightdeck.audit._record import AuditRecord


class MemoryAuditSink:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[AuditRecord] = []

    def record(self, event: AuditRecord) -> None:
        with self._lock:
            self._items.append(event)

    def records(self, run_id: str | None = None, kind: str | None = None) -> list[AuditRecord]:
        with self._lock:
            items = list(self._items)
        return [
            r
            for r in items
            if (run_id is None or r.run_id == run_id) and (kind is None or r.kind == kind)
        ]
