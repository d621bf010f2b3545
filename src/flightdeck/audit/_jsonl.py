"""A JSON Lines sink: one record per line, appended, same shape as `to_dict`."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from flightdeck._json import read_json
from flightdeck.audit._errors import AuditStoreError
from flightdeck.audit._record import AuditRecord


class JsonlAuditSink:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        # 1-based numbers of the lines the last `records` call could not read.
        self.skipped: list[int] = []

    def record(self, event: AuditRecord) -> None:
        line = json.dumps(event.to_dict(), sort_keys=True, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One write call per record keeps lines whole under concurrent appenders.
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)

    def records(self, run_id: str | None = None, kind: str | None = None) -> list[AuditRecord]:
        """Records in file order. A torn, foreign or non-UTF-8 line is skipped
        (never hiding the others) and its number kept in `skipped`; a file
        with lines but none readable is `audit.store_corrupt`, not empty."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.skipped = []
            return []
        except OSError as exc:  # a directory, no permission
            raise AuditStoreError("audit.store_unusable", self.path, str(exc.strerror)) from None
        out: list[AuditRecord] = []
        skipped: list[int] = []
        readable = 0
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                rec = AuditRecord.from_dict(read_json(raw.decode("utf-8"), depth=None))
            except ValueError:  # UnicodeDecodeError is one too
                skipped.append(number)
                continue
            readable += 1
            if (run_id is None or rec.run_id == run_id) and (kind is None or rec.kind == kind):
                out.append(rec)
        self.skipped = skipped
        # A last line with no newline is a write cut short by a crash, not damage.
        torn = skipped[-1:] == [data.count(b"\n") + 1] and not data.endswith(b"\n")
        damaged = skipped[:-1] if torn else skipped
        if damaged and not readable:
            raise AuditStoreError(
                "audit.store_corrupt",
                self.path,
                f"no line is an audit record ({len(damaged)} unreadable, "
                f"first at line {damaged[0]})",
            )
        return out
