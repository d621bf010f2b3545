"""The audit store on PostgreSQL (`[store] url`): the same records, the
same named migrations as the SQLite store, in the database the run journal
uses. `fields` is JSONB, so `audit list` asks `fields @> {...}` of a GIN
index; it is read back as text through the bounded JSON reader.

Each record is one autocommitted INSERT on a pooled connection, except
the records a Temporal worker applies with a scheduling round's journal
rows: those are sent in that round's transaction (`insert`,
`launch.engine._audit.AuditRouter`), committed with the rows or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from flightdeck._json import read_json
from flightdeck.audit._errors import AuditStoreError
from flightdeck.audit._record import AuditRecord
from flightdeck.config import StoreError, mask_url

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from flightdeck.audit._query import AuditQuery

# The SQLite store's history, name for name (`_sqlite.MIGRATIONS`).
MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_records",
        """
        CREATE TABLE records (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            kind TEXT COLLATE "C" NOT NULL,
            run_id TEXT COLLATE "C",
            timestamp TEXT COLLATE "C" NOT NULL,
            fields JSONB NOT NULL
        );
        CREATE INDEX records_run_id ON records (run_id);
        CREATE INDEX records_kind ON records (kind);
        """,
    ),
    (
        "0002_query_indexes",
        """
        CREATE INDEX records_timestamp ON records (timestamp);
        CREATE INDEX records_fields ON records USING gin (fields jsonb_path_ops);
        """,
    ),
)


_INSERT = "INSERT INTO records (kind, run_id, timestamp, fields) VALUES (%s, %s, %s, %s)"


def _store_error(exc: StoreError) -> AuditStoreError:
    return AuditStoreError(exc.code, exc.location, exc.reason)


class PostgresAuditSink:
    """Thread-safe: each call takes a connection from the process's pool."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool: ConnectionPool | None = None

    @property
    def path(self) -> str:
        """Where the store is, for messages: the URL without its password."""
        return mask_url(self.url)

    def _connect(self) -> ConnectionPool:
        if self._pool is None:
            from flightdeck.config._database import migrate_postgres, pool

            try:
                opened = pool(self.url)
                migrate_postgres(self.url, "audit", MIGRATIONS)
            except StoreError as exc:
                raise _store_error(exc) from None
            self._pool = opened
        return self._pool

    def _run(self, sql: str, args: list[Any] | tuple[Any, ...]) -> list[tuple[Any, ...]]:
        import psycopg

        try:
            with self._connect().connection() as conn:
                cursor = conn.execute(sql, args)
                return cursor.fetchall() if cursor.description else []
        except psycopg.OperationalError as exc:
            from flightdeck.config._database import unreachable

            raise _store_error(unreachable(self.url, exc)) from None

    def close(self) -> None:
        self._pool = None  # the pool is the process's (`close_pools`)

    def migrations(self) -> list[str]:
        rows = self._run("SELECT name FROM _migrations WHERE store = 'audit' ORDER BY name", ())
        return [row[0] for row in rows]

    def record(self, event: AuditRecord) -> None:
        self._run(*self.insert(event))

    def insert(self, event: AuditRecord) -> tuple[str, tuple[Any, ...]]:
        """The statement that writes `event`, for a writer that sends it in
        a transaction of its own; the store is migrated first."""
        self._connect()
        payload = json.dumps(dict(event.fields), sort_keys=True, ensure_ascii=False)
        return _INSERT, (event.kind, event.run_id, event.timestamp, payload)

    def records(self, run_id: str | None = None, kind: str | None = None) -> list[AuditRecord]:
        sql = "SELECT kind, run_id, timestamp, fields::text FROM records WHERE true"
        args: list[str] = []
        if run_id is not None:
            sql += " AND run_id = %s"
            args.append(run_id)
        if kind is not None:
            sql += " AND kind = %s"
            args.append(kind)
        return [_decode(row) for row in self._run(sql + " ORDER BY id", args)]

    def query(self, query: AuditQuery) -> list[AuditRecord]:
        """What `query` keeps, oldest first, filtered and paged in SQL (`_sql.py`)."""
        import psycopg

        from flightdeck.audit._sql import BATCH, page

        def fetch(sql: str, args: list[Any]) -> Iterator[list[tuple[Any, ...]]]:
            # A server-side cursor: the rows come a batch at a time, and
            # stopping early (a full page) reads no more of them.
            with self._connect().connection() as conn, conn.transaction():
                cursor = conn.cursor(name="audit_page")
                cursor.itersize = BATCH
                cursor.execute(sql, args)
                while batch := cursor.fetchmany(BATCH):
                    yield batch

        try:
            return page(query, "postgres", fetch, _decode)
        except psycopg.OperationalError as exc:
            from flightdeck.config._database import unreachable

            raise _store_error(unreachable(self.url, exc)) from None


def _decode(row: tuple[Any, ...]) -> AuditRecord:
    kind, run_id, timestamp, fields = row
    return AuditRecord(
        kind=kind, run_id=run_id, timestamp=timestamp, fields=read_json(fields, depth=None)
    )
