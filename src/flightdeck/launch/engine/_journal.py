"""The run journal: SQLite, one row per run and per step, written as steps
complete (before any dependant starts), so a killed or paused run resumes
without repeating completed steps.

The schema evolves by append-only named migrations (`_journal_schema`). A
step row moves
`started` -> `completed` | `failed` | `pending-approval`; a `started` row left
behind by a killed process is "in doubt" on resume.

A run row records the executor that walks it (`local` or `temporal`, and for
Temporal the cluster: address, namespace, task queues), so that a resume, an
approval or `runs show` goes where the run lives. Rows written before that
was recorded have neither (`executor` is None: unknown).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.audit import utc_now
from flightdeck.config import ConfigError, StoreError, data_dir, mask_url, store_url
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._journal_schema import migrate
from flightdeck.launch.engine._output_store import CHUNK_SELECT, chunk_of, output_writes
from flightdeck.launch.engine._rows import (
    RUN_COLUMNS,
    STEP_FINISHED,
    STEP_RAN,
    STEP_STARTED,
    RunRow,
    StepRow,
    dumps,
    run_row,
    step_row,
)

if TYPE_CHECKING:
    from flightdeck.launch.engine._journal_pg import PostgresJournalConnection

JOURNAL_FILE = "runs.sqlite3"
WAL_CHECKPOINT_PAGES = 10_000  # SQLite's default is 1,000 (see `_open`)


def _unusable(path: Path, exc: Exception) -> LaunchError:
    """A damaged journal is reported as damaged, never read as empty."""
    reason = str(exc)
    if isinstance(exc, OSError) and exc.strerror:  # e.g. the data directory is a file
        reason = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return LaunchError(
        "journal.unusable",
        f"the run journal {path} cannot be used: {reason}",
        hint="move the file aside to start a new journal (or check FLIGHTDECK_HOME)",
    )


# Statuses of a run that has not ended: walking, or paused for an approval.
_OPEN = frozenset({"running", "pending-approval"})


def _configured_url() -> str | None:
    try:
        return store_url()
    except StoreError as exc:
        raise LaunchError(exc.code, exc.message, hint=exc.hint) from None
    except ConfigError as exc:
        raise LaunchError(exc.code, f"{exc.path}: {exc.message}") from None


class Journal:
    """One SQLite file (default `data_dir()/runs.sqlite3`), WAL mode, or the
    PostgreSQL database `url` names (default: the configured store, see
    `flightdeck.config._database`; an explicit `path` is always SQLite). Each
    write commits before it returns, except inside `batch()`, whose writes
    commit together when the block ends."""

    def __init__(self, path: Path | None = None, *, url: str | None = None) -> None:
        # Resolved on first use, not here: a command reports a bad URL or an
        # unreadable config.toml where it reports the journal's other errors.
        self._url = url
        self._resolved = url is not None or path is not None
        self.path = path if path is not None else data_dir() / JOURNAL_FILE
        # Re-entrant: `batch()` holds it while the writes inside take it again.
        self._lock = threading.RLock()
        # sqlite3's, or the PostgreSQL stand-in that speaks the same calls.
        self._conn: sqlite3.Connection | PostgresJournalConnection | None = None
        # Inside `batch()`: the writes not yet executed, and the block's timestamp.
        self._pending: list[tuple[str, tuple[Any, ...]]] | None = None
        self._stamp: str | None = None
        # Inside `batch()`: where in `_pending` a step's start waits, so its
        # finish in the same block can join it (`step_finished`).
        self._starts: dict[tuple[str, str], int] = {}

    @property
    def url(self) -> str | None:
        """The PostgreSQL store's URL, or None for the SQLite file. Raises
        `LaunchError` (`database.bad_url`, `config.invalid`)."""
        if not self._resolved:
            self._url, self._resolved = _configured_url(), True
        return self._url

    @property
    def location(self) -> str:
        """Where the journal is, for people: its file, or its URL without the password."""
        try:
            url = self.url
        except LaunchError:
            return str(self.path)
        return str(self.path) if url is None else mask_url(url)

    def _db(self) -> sqlite3.Connection | PostgresJournalConnection:
        url = self.url
        if self._conn is None and url is not None:
            from flightdeck.launch.engine._journal_pg import PostgresJournalConnection

            self._conn = PostgresJournalConnection(url)
        if self._conn is None:
            try:
                self._conn = self._open()
            except (sqlite3.DatabaseError, OSError) as exc:
                raise _unusable(self.path, exc) from None
        return self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Checkpoints (copying the WAL into the database, with fsyncs) are
        # what made a round's commit slow: at SQLite's default of 1,000
        # pages one came every few hundred rounds. A commit is durable
        # against kill -9 once it is in the WAL, so checkpointing less often
        # keeps every guarantee; the WAL may grow to ~40 MiB between them
        # and is cut back to 4 MiB after each.
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA journal_size_limit={4 * 1024 * 1024}")
        migrate(conn)
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction for the writes made in the block (one commit instead
        of one per write). The scheduler wraps each round in it: the block has
        no `await`, so the round's rows are on disk before any step it
        started runs, as with per-write commits. Other threads' writes wait
        for the commit. The writes are committed even if the block raises:
        each is a fact about a step that already happened. A write the
        store refuses rolls the whole block back, on both backends
        (PostgreSQL aborts the transaction): none of it is kept.

        Inside the block writes are kept in order and executed together at
        its end (`executemany` per run of one statement), stamped with the
        block's one timestamp; a read inside the block sees them."""
        with self._lock:
            if self._pending is not None:  # nested: the outer block commits
                yield
                return
            self._db()  # opened (or refused as unusable) on entry, as before
            self._pending, self._stamp = [], utc_now()
            drained = False
            try:
                yield
            finally:
                try:
                    if self._pending:
                        self._drain(self._db())
                    drained = True
                finally:
                    self._pending, self._stamp = None, None
                    self._starts.clear()
                    if self._conn is not None and self._conn.in_transaction:
                        self._conn.execute("COMMIT" if drained else "ROLLBACK")

    def _drain(self, conn: sqlite3.Connection | PostgresJournalConnection) -> None:
        """Run the block's buffered writes inside its (now open) transaction."""
        pending, self._pending = self._pending or [], []
        self._starts.clear()
        if not conn.in_transaction:
            conn.execute("BEGIN")
        for sql, group in groupby(pending, key=itemgetter(0)):
            conn.executemany(sql, [args for _, args in group])

    def join(self, write: Callable[[], tuple[str, tuple[Any, ...]]]) -> bool:
        """Send `write()`, a statement of another store in this database (an
        audit record, `AuditRouter`), with the `batch()` this thread has open:
        False, and nothing called, outside one."""
        if not self._lock.acquire(blocking=False):
            return False  # another thread's block: not this one's to join
        try:
            if self._pending is None:
                return False
            self._pending.append(write())
            return True
        finally:
            self._lock.release()

    def _now(self) -> str:
        return self._stamp or utc_now()

    def _exec(self, sql: str, args: tuple[Any, ...]) -> None:
        with self._lock:
            if self._pending is not None:
                self._pending.append((sql, args))
                return
            self._db().execute(sql, args)

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            conn = self._db()
            if self._pending:
                self._drain(conn)
            return conn.execute(sql, args).fetchall()

    # runs -----------------------------------------------------------------
    def create_run(
        self,
        run_id: str,
        *,
        plan_name: str,
        plan_path: str,
        content_hash: str | None,
        launch_time: str,
        inputs: dict[str, Any],
        options: dict[str, Any],
        executor: str = "local",
        cluster: dict[str, Any] | None = None,
    ) -> None:
        self._exec(
            "INSERT INTO runs (run_id, plan_name, plan_path, content_hash, status, started_at,"
            " launch_time, inputs, options, executor, cluster)"
            " VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                plan_name,
                plan_path,
                content_hash,
                utc_now(),
                launch_time,
                dumps(inputs),
                dumps(options),
                executor,
                None if cluster is None else dumps(cluster),
            ),
        )

    def set_run_executor(self, run_id: str, executor: str, cluster: dict[str, Any] | None) -> None:
        """Where a resumed run now lives: a cluster reached at a new address,
        or a run recorded before executors were, now walked by one."""
        self._exec(
            "UPDATE runs SET executor = ?, cluster = ? WHERE run_id = ?",
            (executor, None if cluster is None else dumps(cluster), run_id),
        )

    def set_run_inputs(self, run_id: str, inputs: dict[str, Any]) -> None:
        # A Temporal run's source inputs, read on a worker after the run row.
        self._exec("UPDATE runs SET inputs = ? WHERE run_id = ?", (dumps(inputs), run_id))

    def set_run_status(self, run_id: str, status: str, error: dict[str, Any] | None = None) -> None:
        # A run paused for an approval has not finished: it has no end time.
        finished = None if status in _OPEN else utc_now()
        self._exec(
            "UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ?",
            (status, finished, None if error is None else dumps(error), run_id),
        )

    def run(self, run_id: str) -> RunRow | None:
        rows = self._rows(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?",
            (run_id,),
        )
        return run_row(rows[0]) if rows else None

    def runs(self, limit: int = 50) -> list[RunRow]:
        rows = self._rows(
            f"SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at DESC LIMIT ?",
            (limit,),
        )
        return [run_row(row) for row in rows]

    def round_applied(self, run_id: str, key: str) -> bool:
        """Whether the batch `key` of a run's writes (`mark_round`) committed."""
        sql = "SELECT 1 FROM applied_rounds WHERE run_id = ? AND round = ?"
        return bool(self._rows(sql, (run_id, key)))

    def mark_round(self, run_id: str, key: str) -> None:
        """Record, with the writes of the open `batch()`, that they are batch
        `key`. A plain insert: a batch already applied, or being applied by
        another transaction, fails here, and the block is rolled back."""
        self._exec("INSERT INTO applied_rounds (run_id, round) VALUES (?, ?)", (run_id, key))

    # steps ----------------------------------------------------------------
    def step_started(self, run_id: str, step_id: str, kind: str, approval: str | None) -> None:
        args = (run_id, step_id, kind, self._now(), approval)
        with self._lock:
            if self._pending is not None:
                self._starts[(run_id, step_id)] = len(self._pending)
            self._exec(STEP_STARTED, args)

    def step_finished(
        self,
        run_id: str,
        step_id: str,
        kind: str,
        status: str,
        *,
        attempts: int = 0,
        result: Any = None,
        error: dict[str, Any] | None = None,
        approval: str | None = None,
    ) -> None:
        stored_result = None if result is None else dumps(result)
        stored_error = None if error is None else dumps(error)
        with self._lock:
            at = self._starts.pop((run_id, step_id), None) if self._pending is not None else None
            if self._pending is not None and at is not None:
                # Started in this block (a cascaded transform): one write
                # where a start and a finish were two, in the start's place
                # (rows keep their order), giving the row the two leave.
                _, (_, _, started_kind, started_at, started_approval) = self._pending[at]
                self._pending[at] = (
                    STEP_RAN,
                    (
                        run_id,
                        step_id,
                        started_kind,
                        status,
                        started_at,
                        self._now(),
                        attempts,
                        stored_result,
                        stored_error,
                        approval if approval is not None else started_approval,
                    ),
                )
                return
            self._exec(
                STEP_FINISHED,
                (
                    run_id,
                    step_id,
                    kind,
                    status,
                    self._now(),
                    attempts,
                    stored_result,
                    stored_error,
                    approval,
                ),
            )

    def steps(self, run_id: str) -> list[StepRow]:
        rows = self._rows(
            "SELECT step_id, kind, status, started_at, finished_at, attempts, result, error,"
            " approval FROM steps WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )
        return [step_row(r) for r in rows]

    # outputs --------------------------------------------------------------
    def output(self, run_id: str, record: dict[str, Any], content: str | None) -> None:
        """Keep an output's record and (not None) content, in chunks when
        large (`_output_store`): its rows commit together."""
        with self.batch():
            for sql, args in output_writes(run_id, record, content):
                self._exec(sql, args)

    def output_contents(self, run_id: str) -> list[dict[str, Any]]:
        """`outputs`, each with the content its row keeps (None: not kept, or
        in `chunks` rows: see `output_chunk`)."""
        rows = self._rows(
            "SELECT name, path, mime_type, sha256, bytes, content, chunks FROM outputs"
            " WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )
        return [
            {"name": r[0], "path": r[1], "mime_type": r[2], "sha256": r[3], "bytes": r[4]}
            | {"content": r[5], "chunks": r[6]}
            for r in rows
        ]

    def output_chunk(self, run_id: str, name: str, seq: int) -> tuple[bytes, str] | None:
        """Chunk `seq` of an output kept in chunks, with its SHA-256; None if gone."""
        return chunk_of(self._rows(CHUNK_SELECT, (run_id, name, seq)))

    def outputs(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT name, path, mime_type, sha256, bytes FROM outputs WHERE run_id = ?"
            " ORDER BY rowid",
            (run_id,),
        )
        return [
            {"name": r[0], "path": r[1], "mime_type": r[2], "sha256": r[3], "bytes": r[4]}
            for r in rows
        ]
