"""The default audit store: SQLite in WAL mode with append-only named migrations.

Migrations are a list of (name, SQL); each applied name is recorded in the
`_migrations` table and never edited afterwards: a schema change is a new
entry at the end of the list.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck._json import read_json
from flightdeck.audit._errors import AuditStoreError
from flightdeck.audit._record import AuditRecord
from flightdeck.config import migrate_sqlite

if TYPE_CHECKING:
    from flightdeck.audit._query import AuditQuery

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_records",
        """
        CREATE TABLE records (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            run_id TEXT,
            timestamp TEXT NOT NULL,
            fields TEXT NOT NULL
        );
        CREATE INDEX records_run_id ON records (run_id);
        CREATE INDEX records_kind ON records (kind);
        """,
    ),
    (
        # `audit list` filters in SQL (`_sql.py`): by time, and by the plan
        # and the action fields in every spelling `--action` looks for (an
        # OR that SQLite answers from indexes only when each term has one),
        # each indexed only where a record has the field.
        "0002_query_indexes",
        """
        CREATE INDEX records_timestamp ON records (timestamp);
        CREATE INDEX records_plan ON records (json_extract(fields, '$."plan"'))
            WHERE json_extract(fields, '$."plan"') IS NOT NULL;
        CREATE INDEX records_action ON records (json_extract(fields, '$."action"'))
            WHERE json_extract(fields, '$."action"') IS NOT NULL;
        CREATE INDEX records_action_ref ON records (json_extract(fields, '$."action_ref"'))
            WHERE json_extract(fields, '$."action_ref"') IS NOT NULL;
        CREATE INDEX records_action_ref_camel ON records (json_extract(fields, '$."actionRef"'))
            WHERE json_extract(fields, '$."actionRef"') IS NOT NULL;
        CREATE INDEX records_tool ON records (json_extract(fields, '$."tool"'))
            WHERE json_extract(fields, '$."tool"') IS NOT NULL;
        CREATE INDEX records_agent_tool ON records (json_extract(fields, '$."agent_tool"'))
            WHERE json_extract(fields, '$."agent_tool"') IS NOT NULL;
        CREATE INDEX records_agent_tool_camel ON records (json_extract(fields, '$."agentTool"'))
            WHERE json_extract(fields, '$."agentTool"') IS NOT NULL;
        """,
    ),
)


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    # Under the write lock: two processes creating the store at once apply
    # each migration once.
    migrate_sqlite(conn, MIGRATIONS)


class SQLiteAuditSink:
    """Thread-safe: each thread keeps its own connection (sqlite3 connections are
    per-thread); WAL lets readers in other processes run alongside writers.
    `synchronous=NORMAL` is the documented safe pairing with WAL: a power cut
    may lose the last records, never corrupt the file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ready = False
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            return self._open()
        except OSError as exc:  # its folder is a file, no permission
            raise AuditStoreError("audit.store_unusable", self.path, str(exc.strerror)) from None
        except sqlite3.OperationalError as exc:  # "unable to open database file", locked
            raise AuditStoreError("audit.store_unusable", self.path, str(exc)) from None
        except sqlite3.DatabaseError as exc:  # "file is not a database": a person must look
            raise AuditStoreError("audit.store_corrupt", self.path, str(exc)) from None

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous=NORMAL")
            if not self._ready:
                with self._lock:
                    if not self._ready:
                        conn.execute("PRAGMA journal_mode=WAL")
                        _migrate(conn)
                        self._ready = True
        except sqlite3.DatabaseError:
            conn.close()
            raise
        self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def migrations(self) -> list[str]:
        conn = self._connect()
        return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]

    def record(self, event: AuditRecord) -> None:
        payload = json.dumps(dict(event.fields), sort_keys=True, ensure_ascii=False)
        self._connect().execute(
            "INSERT INTO records (kind, run_id, timestamp, fields) VALUES (?, ?, ?, ?)",
            (event.kind, event.run_id, event.timestamp, payload),
        )

    def records(self, run_id: str | None = None, kind: str | None = None) -> list[AuditRecord]:
        sql = "SELECT kind, run_id, timestamp, fields FROM records WHERE 1=1"
        args: list[str] = []
        if run_id is not None:
            sql += " AND run_id = ?"
            args.append(run_id)
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        rows = self._connect().execute(sql + " ORDER BY id", args).fetchall()
        return [
            AuditRecord(kind=k, run_id=r, timestamp=t, fields=read_json(f, depth=None))
            for k, r, t, f in rows
        ]

    def query(self, query: AuditQuery) -> list[AuditRecord]:
        """What `query` keeps, oldest first, filtered and paged in SQL (`_sql.py`)."""
        from flightdeck.audit._sql import BATCH, page

        conn = self._connect()

        def fetch(sql: str, args: list[Any]) -> Iterator[list[tuple[Any, ...]]]:
            cursor = conn.execute(sql, args)
            while batch := cursor.fetchmany(BATCH):
                yield batch

        return page(query, "sqlite", fetch, _decode)


def _decode(row: tuple[Any, ...]) -> AuditRecord:
    kind, run_id, timestamp, fields = row
    return AuditRecord(
        kind=kind, run_id=run_id, timestamp=timestamp, fields=read_json(fields, depth=None)
    )
