"""The run journal's schema: append-only named migrations, as in the audit
store. Each applied name is recorded in `_migrations` and never edited
afterwards: a schema change is a new entry at the end of the list.

Processes may open an old journal at once (a launcher and its workers
sharing a data directory, right after an upgrade): the missing migrations are
applied under one write lock taken before reading what is applied, so each is
applied once between them.
"""

from __future__ import annotations

import sqlite3

from flightdeck.config import migrate_sqlite

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_runs",
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            plan_name TEXT NOT NULL,
            plan_path TEXT NOT NULL,
            content_hash TEXT,
            status TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            launch_time TEXT NOT NULL,
            inputs TEXT NOT NULL,
            options TEXT NOT NULL,
            error TEXT
        );
        CREATE TABLE steps (
            run_id TEXT NOT NULL,
            step_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            error TEXT,
            approval TEXT,
            PRIMARY KEY (run_id, step_id)
        );
        CREATE TABLE outputs (
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            path TEXT,
            mime_type TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            content TEXT,
            PRIMARY KEY (run_id, name)
        );
        """,
    ),
    (
        # NULL for the runs recorded before: their executor is unknown (a
        # default of 'local' would send an old Temporal run's resume here).
        "0002_run_executor",
        """
        ALTER TABLE runs ADD COLUMN executor TEXT;
        ALTER TABLE runs ADD COLUMN cluster TEXT;
        """,
    ),
    (
        # An output over one chunk is kept in rows of 1 MiB (`_output_store`);
        # `chunks` NULL: its content (if kept) is in `content`.
        "0003_output_chunks",
        """
        ALTER TABLE outputs ADD COLUMN chunks INTEGER;
        CREATE TABLE output_chunks (
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            seq INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (run_id, name, seq)
        );
        """,
    ),
    (
        # The batches of writes a Temporal run's workflow hands its workers,
        # by key, each recorded in the transaction that applies it: a batch
        # sent again (a step retried on another worker) is applied once.
        "0004_applied_rounds",
        """
        CREATE TABLE applied_rounds (
            run_id TEXT NOT NULL,
            round TEXT NOT NULL,
            PRIMARY KEY (run_id, round)
        );
        """,
    ),
)

# The same history on PostgreSQL (docs/decisions.md, "One store, two
# backends"): the same names in the same order, each in PostgreSQL's words.
# Rows keep their insertion order in `seq` where SQLite has a rowid.
POSTGRES_MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_runs",
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            plan_name TEXT NOT NULL,
            plan_path TEXT NOT NULL,
            content_hash TEXT,
            status TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            launch_time TEXT NOT NULL,
            inputs TEXT NOT NULL,
            options TEXT NOT NULL,
            error TEXT
        );
        CREATE INDEX runs_started_at ON runs (started_at);
        CREATE TABLE steps (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            run_id TEXT NOT NULL,
            step_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            error TEXT,
            approval TEXT,
            PRIMARY KEY (run_id, step_id)
        );
        CREATE TABLE outputs (
            seq BIGSERIAL,
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            path TEXT,
            mime_type TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            bytes BIGINT NOT NULL,
            content TEXT,
            PRIMARY KEY (run_id, name)
        );
        """,
    ),
    (
        "0002_run_executor",
        """
        ALTER TABLE runs ADD COLUMN executor TEXT;
        ALTER TABLE runs ADD COLUMN cluster TEXT;
        """,
    ),
    (
        "0003_output_chunks",
        """
        ALTER TABLE outputs ADD COLUMN chunks INTEGER;
        CREATE TABLE output_chunks (
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            seq INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            data BYTEA NOT NULL,
            PRIMARY KEY (run_id, name, seq)
        );
        """,
    ),
    (
        "0004_applied_rounds",
        """
        CREATE TABLE applied_rounds (
            run_id TEXT NOT NULL,
            round TEXT NOT NULL,
            PRIMARY KEY (run_id, round)
        );
        """,
    ),
)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the journal on `conn` (autocommit) to the newest schema, under
    the write lock (`flightdeck.config.migrate_sqlite`)."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    migrate_sqlite(conn, MIGRATIONS)
