"""The page's reads on the PostgreSQL store (`[store] url`): the same SQL
`_data.Reader` runs on the SQLite files, spoken in PostgreSQL's dialect, on
a pooled connection inside a READ ONLY transaction, so that no route can
change a row there either. A store no launch has written to yet (no
`runs` or `records` table) reads as empty, as a missing file does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flightdeck.config import mask_url
from flightdeck.ui._errors import UiError

_INSTR = re.compile(r"instr\((\w+), \?\) > 0")


def dialect(sql: str) -> str:
    """`_data`'s SQLite statements in PostgreSQL's words."""
    sql = _INSTR.sub(
        lambda m: f"strpos({m.group(1)}{'::text' if m.group(1) == 'fields' else ''}, ?) > 0",
        sql,
    )
    # Runs are listed newest first: SQLite walks its rowid, PostgreSQL's
    # journal has an index on the start time instead.
    sql = sql.replace("ORDER BY rowid DESC LIMIT", "ORDER BY started_at DESC, run_id DESC LIMIT")
    sql = sql.replace("ORDER BY rowid", "ORDER BY seq")
    sql = sql.replace("substr(kind, 1, ?)", "substr(kind, 1, ?::int)")
    sql = sql.replace(
        "SELECT kind, run_id, timestamp, fields FROM",
        "SELECT kind, run_id, timestamp, fields::text FROM",
    )
    return sql.replace("?", "%s")


class _Connection:
    """The calls `_data` makes of a sqlite3 connection."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Any = ()) -> Any:
        return self._conn.execute(dialect(sql), list(args))


@contextmanager
def read_only_pg(url: str, table: str) -> Iterator[_Connection | None]:
    """A read-only view of the store; None when `table` does not exist yet."""
    import psycopg

    from flightdeck.config._database import StoreError, pool

    where = mask_url(url)
    try:
        with pool(url).connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION READ ONLY")
            found = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            if found is None or found[0] is None:
                yield None
                return
            yield _Connection(conn)
    except StoreError as exc:
        raise UiError("ui.store_unreadable", exc.message) from None
    except psycopg.Error as exc:
        raise UiError("ui.store_unreadable", f"cannot read {where}: {exc}") from None
