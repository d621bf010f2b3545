"""The run journal on PostgreSQL: the few calls `Journal` makes of its
sqlite3 connection (`execute`, `executemany`, `in_transaction`, `BEGIN` and
`COMMIT`, `close`), made on a psycopg pool, with the journal's statements
spoken in PostgreSQL's dialect (`%s` placeholders, `seq` where SQLite has a
rowid, an upsert where SQLite replaces).

Transactions are READ COMMITTED: every journal write is one row's insert or
upsert keyed by (run, step) or (run, output), which PostgreSQL makes atomic at
that level, and a run's rows have one writer at a time (the one-resume lock,
`_lock`). What can still abort a transaction is a deadlock or a serialization
failure between two writers of neighbouring rows: PostgreSQL then rolls all
of it back, and the block's writes (kept in order) are replayed in a new
transaction by tenacity, a few times, with jitter. Nothing else is retried:
a lost connection may have committed, and replaying a create would be a
second run row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flightdeck.config._database import StoreError, mask_url, migrate_postgres, pool, unreachable
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._journal_schema import POSTGRES_MIGRATIONS
from flightdeck.launch.engine._output_store import OUTPUT_REPLACE

if TYPE_CHECKING:
    from psycopg import Connection

# SQLite's REPLACE deletes and re-inserts, moving the row to the end of the
# run's outputs; a new `seq` does the same here.
_OUTPUT_UPSERT = (
    "INSERT INTO outputs (run_id, name, path, mime_type, sha256, bytes, content, chunks)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, name) DO UPDATE SET"
    " path = excluded.path, mime_type = excluded.mime_type, sha256 = excluded.sha256,"
    " bytes = excluded.bytes, content = excluded.content, chunks = excluded.chunks,"
    " seq = nextval(pg_get_serial_sequence('outputs', 'seq'))"
)
_RETRYABLE_STATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock


def translate(sql: str) -> str:
    if sql == OUTPUT_REPLACE:
        return _OUTPUT_UPSERT
    return sql.replace("?", "%s").replace("ORDER BY rowid", "ORDER BY seq")


def _retryable(exc: BaseException) -> bool:
    return getattr(exc, "sqlstate", None) in _RETRYABLE_STATES


def _down(url: str, exc: BaseException) -> LaunchError:
    error = unreachable(url, exc)
    return LaunchError(error.code, error.message, hint=error.hint)


class _Fetched:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows


class PostgresJournalConnection:
    """Stands where `Journal` keeps its sqlite3 connection. Outside a
    transaction each statement commits on its own pooled connection. Between
    `BEGIN` and `COMMIT` one connection is held and the writes are kept in
    order, sent with the BEGIN and the COMMIT in one pipeline (one round trip
    for a round, not three), or earlier when a read in the block needs
    them; the same list is what a replay sends again."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            self._pool = pool(url)
            migrate_postgres(url, "journal", POSTGRES_MIGRATIONS)
        except StoreError as exc:
            raise LaunchError(exc.code, exc.message, hint=exc.hint) from None
        self._held: Connection[Any] | None = None
        self._log: list[tuple[str, list[tuple[Any, ...]]]] = []
        self._sent = 0  # how many of `_log` the server's open transaction holds
        self._open = False  # BEGIN sent

    @property
    def location(self) -> str:
        return mask_url(self.url)

    @property
    def in_transaction(self) -> bool:
        return self._held is not None

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> _Fetched:
        if sql == "BEGIN":
            self._begin()
            return _Fetched([])
        if sql == "COMMIT":
            self._commit()
            return _Fetched([])
        if sql == "ROLLBACK":  # nothing of the block is kept
            self._release()
            return _Fetched([])
        sql = translate(sql)
        if self._held is not None and sql.startswith("SELECT"):
            self._send(commit=False)  # the read sees the block's writes
            return _Fetched(self._held.execute(sql, args).fetchall())
        if self._held is not None:
            self._log.append((sql, [args]))
            return _Fetched([])
        fetched: _Fetched = self._retrying(lambda: self._once(sql, args))
        return fetched

    def executemany(self, sql: str, seq: Iterable[tuple[Any, ...]]) -> None:
        sql, rows = translate(sql), list(seq)
        if self._held is None:
            self._retrying(lambda: self._once_many(sql, rows))
            return
        self._log.append((sql, rows))

    def close(self) -> None:
        self._release()

    # ------------------------------------------------------------------
    def _once(self, sql: str, args: tuple[Any, ...]) -> _Fetched:
        with self._pool.connection() as conn:
            cursor = conn.execute(sql, args)
            return _Fetched(cursor.fetchall() if cursor.description else [])

    def _once_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.cursor().executemany(sql, rows)

    def _begin(self) -> None:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            self._held = self._pool.getconn()
        except (psycopg.Error, PoolTimeout) as exc:
            raise _down(self.url, exc) from None
        self._log, self._sent, self._open = [], 0, False

    def _send(self, *, commit: bool) -> None:
        """Send what the server does not have yet (and COMMIT) in one
        pipeline; on a deadlock or serialization failure, the whole block
        again in a new transaction."""
        import psycopg

        held = self._held
        assert held is not None
        if not commit and self._sent == len(self._log):
            return
        try:
            self._pipeline(held, self._log[self._sent :], begin=not self._open, commit=commit)
        except psycopg.Error as exc:
            if not _retryable(exc):
                raise self._abandon(exc) from None
            try:
                self._retrying(lambda: self._pipeline(held, self._log, begin=True, commit=commit))
            except LaunchError:
                self._release()
                raise
        self._open, self._sent = not commit, len(self._log)

    @staticmethod
    def _pipeline(
        held: Connection[Any],
        writes: list[tuple[str, list[tuple[Any, ...]]]],
        *,
        begin: bool,
        commit: bool,
    ) -> None:
        if begin and held.info.transaction_status != 0:  # a failed try: end it first
            held.execute("ROLLBACK")
        with held.pipeline():
            if begin:
                held.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            for sql, rows in writes:
                held.cursor().executemany(sql, rows)
            if commit:
                held.execute("COMMIT")

    def _commit(self) -> None:
        held = self._held
        assert held is not None
        if self._log or self._open:
            self._send(commit=True)
        self._held, self._log, self._sent, self._open = None, [], 0, False
        self._pool.putconn(held)

    def _release(self) -> None:
        held, self._held, self._log, self._sent, self._open = self._held, None, [], 0, False
        if held is not None:
            self._pool.putconn(held)  # the pool rolls back what is left open

    def _abandon(self, exc: BaseException) -> LaunchError:
        self._release()
        return _down(self.url, exc)

    def _retrying(self, call: Any) -> Any:
        import psycopg
        from tenacity import (
            Retrying,
            retry_if_exception,
            stop_after_attempt,
            wait_random_exponential,
        )

        try:
            for attempt in Retrying(
                retry=retry_if_exception(_retryable),
                stop=stop_after_attempt(5),
                wait=wait_random_exponential(multiplier=0.01, max=0.5),
                reraise=True,
            ):
                with attempt:
                    return call()
        except psycopg.Error as exc:  # a lost server, or still deadlocked after 5 tries
            raise _down(self.url, exc) from None
        return None  # unreachable: Retrying either returns or re-raises
