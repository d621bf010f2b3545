"""A JSON Lines sink: one record per line, appended, same shape as `to_dict`."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from flightdeck.audit._record import AuditRecord


class JsonlAuditSink:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def record(self, event: AuditRecord) -> None:
        line = json.dumps(event.to_dict(), sort_keys=True, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One write call per record keeps lines whole under concurrent appenders.
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)

    def records(self, run_id: str | None = None, kind: str | None = None) -> list[AuditRecord]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out: list[AuditRecord] = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                rec = AuditRecord.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue  # a torn or foreign line never hides the others
            if (run_id is None or rec.run_id == run_id) and (kind is None or rec.kind == kind):
                out.append(rec)
        return out
