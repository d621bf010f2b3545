"""The trust state in the PostgreSQL store (`[store] url`): one row per plan
name, so every machine of a fleet refuses the same rollbacks and changed
publishers, instead of each remembering only what it verified itself.

`TrustState` keeps its logic; this holds its rows. A check reads and writes
inside one transaction under an advisory transaction lock (the file
backend's `trust.json.lock`), so two machines verifying one name at once
pin it once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flightdeck.config import StoreError, mask_url
from flightdeck.flightplan._errors import FlightPlanError

# A row: name, owner, version, content_hash, pinned_at (`TrustRecord`'s
# fields, which `_trust` builds from it: this module does not import it).
Row = tuple[str, str, "str | None", str, str]

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_trust_state",
        """
        CREATE TABLE trust_state (
            name TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            version TEXT,
            content_hash TEXT NOT NULL,
            pinned_at TEXT NOT NULL
        );
        """,
    ),
)
_LOCK = 0x66640002


def _unusable(url: str, exc: BaseException) -> FlightPlanError:
    if isinstance(exc, StoreError):
        return FlightPlanError(exc.code, exc.message, hint=exc.hint)
    return FlightPlanError("database.unreachable", f"store {mask_url(url)}: {exc}")


class PostgresTrustRows:
    def __init__(self, url: str) -> None:
        self.url = url
        self._held: Any = None
        self._ready = False

    def _pool(self) -> Any:
        from flightdeck.config._database import migrate_postgres, pool

        try:
            opened = pool(self.url)
            if not self._ready:
                migrate_postgres(self.url, "trust", MIGRATIONS)
                self._ready = True
        except StoreError as exc:
            raise _unusable(self.url, exc) from None
        return opened

    @contextmanager
    def locked(self) -> Iterator[None]:
        import psycopg

        try:
            with self._pool().connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                self._held = conn
                try:
                    yield
                finally:
                    self._held = None
        except psycopg.Error as exc:
            raise _unusable(self.url, exc) from None

    def read(self) -> list[Row]:
        import psycopg

        sql = "SELECT name, owner, version, content_hash, pinned_at FROM trust_state"
        try:
            if self._held is not None:
                rows = self._held.execute(sql).fetchall()
            else:
                with self._pool().connection() as conn:
                    rows = conn.execute(sql).fetchall()
        except psycopg.Error as exc:
            raise _unusable(self.url, exc) from None
        return [tuple(row) for row in rows]

    def write(self, rows: list[Row]) -> None:
        """Replace the rows with `rows` (inside `locked()`, as the file is)."""
        assert self._held is not None, "written only under the lock"
        names = [row[0] for row in rows]
        self._held.execute("DELETE FROM trust_state WHERE NOT (name = ANY(%s))", (names,))
        self._held.cursor().executemany(
            "INSERT INTO trust_state (name, owner, version, content_hash, pinned_at)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET"
            " owner = excluded.owner, version = excluded.version,"
            " content_hash = excluded.content_hash, pinned_at = excluded.pinned_at",
            rows,
        )
