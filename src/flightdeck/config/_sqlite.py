"""What flightdeck's SQLite files share: their schema's migrations.

A run journal and an audit store are each a SQLite file that several
processes may open for the first time at once (a launcher and its workers,
two commands). Their schema changes are named, append-only migrations,
recorded in a `_migrations` table the caller has created. `migrate_sqlite`
applies the missing ones in one transaction that takes the write lock before
it reads what is applied, so a process that waited for another's migration
finds it done instead of applying it again (`table records already exists`,
`duplicate column`).
"""

from __future__ import annotations

import sqlite3


def statements(sql: str) -> list[str]:
    """A migration's statements, split where SQLite says one is complete."""
    out, part = [], ""
    for line in sql.splitlines(keepends=True):
        part += line
        if sqlite3.complete_statement(part):
            out.append(part.strip())
            part = ""
    return out


def _applied(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM _migrations")}


def migrate_sqlite(conn: sqlite3.Connection, migrations: tuple[tuple[str, str], ...]) -> None:
    """Apply the `(name, sql)` migrations `conn` (autocommit) lacks, under
    the write lock; a file that is current takes no lock at all."""
    names = {name for name, _ in migrations}
    if names <= _applied(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        done = _applied(conn)
        for name, sql in migrations:
            if name in done:
                continue
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO _migrations VALUES (?, datetime('now'))", (name,))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
