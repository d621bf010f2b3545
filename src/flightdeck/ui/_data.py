"""What the pages show, read from the stores without writing to them.

The run journal and the audit store are SQLite files other processes write
(a launch appends while the page is open). The UI opens them with
`file:...?mode=ro` URIs: a read-only connection can neither migrate, nor
create the file, nor change a row, whatever a route does. The SQL here reads
the schemas `flightdeck.launch._journal` and `flightdeck.audit._sqlite`
create; tests/ui write through those modules and read back through this one,
so a schema change that breaks the UI fails there.

A store that does not exist yet reads as empty (nothing has run); one that
exists but cannot be read is a `UiError` the page shows. With a PostgreSQL
store configured the same SQL runs there, translated and read-only
(`_pg.py`); tests/ui run every page against both.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from flightdeck._json import read_json
from flightdeck.audit import AuditQuery, AuditRecord
from flightdeck.ui._errors import UiError

PAGE_SIZE = 50
_PLAIN = re.compile(r"^[A-Za-z0-9_.:/@-]+$")
FINISHED = ("completed", "failed", "interrupted")


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection | None]:
    """A read-only connection to `path`, or None when the file is absent."""
    if not path.is_file():
        yield None
        return
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        raise UiError("ui.store_unreadable", f"cannot open {path} read-only: {exc}") from None
    try:
        yield conn
    except sqlite3.Error as exc:
        raise UiError("ui.store_unreadable", f"cannot read {path}: {exc}") from None
    finally:
        conn.close()


def duration_ms(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        began = datetime.fromisoformat(start.replace("Z", "+00:00"))
        ended = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((ended - began).total_seconds() * 1000, 3)


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return read_json(text, depth=None)
    except ValueError:  # shown as stored rather than failing the page
        return text


@dataclass(frozen=True)
class RunFilter:
    status: str | None = None
    search: str | None = None  # a substring of the run id or the plan name
    page: int = 0


@dataclass(frozen=True)
class RunPage:
    runs: list[dict[str, Any]]
    total: int
    page: int
    pages: int


_RUN_COLUMNS = (
    "run_id, plan_name, plan_path, content_hash, status, started_at, finished_at,"
    " launch_time, inputs, options, error"
)


# A run or step in one of these states has not finished, whatever the journal wrote
# in `finished_at` (a run paused for approval records when it paused there).
OPEN_STATUSES = frozenset({"running", "pending-approval"})


def _executor(conn: Any, run_id: str) -> str | None:
    """Where the run executes (`local`, `temporal`), as its launch recorded;
    None for a run recorded before journals kept it. The page never migrates
    a journal, so an older one may lack the column (a PostgreSQL store was
    created with it)."""
    if isinstance(conn, sqlite3.Connection):
        columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
        if "executor" not in columns:
            return None
    found = conn.execute("SELECT executor FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return found[0] if found else None


def _step(row: tuple[Any, ...]) -> dict[str, Any]:
    finished = None if row[2] in OPEN_STATUSES else row[4]
    return {
        "id": row[0],
        "kind": row[1],
        "status": row[2],
        "started_at": row[3],
        "finished_at": finished,
        "attempts": row[5],
        "result": _loads(row[6]),
        "error": _loads(row[7]),
        "approval": row[8],
        "duration_ms": duration_ms(row[3], finished),
    }


def _run(row: tuple[Any, ...]) -> dict[str, Any]:
    finished = None if row[4] in OPEN_STATUSES else row[6]
    return {
        "run_id": row[0],
        "plan": row[1],
        "plan_path": row[2],
        "content_hash": row[3],
        "status": row[4],
        "started_at": row[5],
        "finished_at": finished,
        "launch_time": row[7],
        "inputs": _loads(row[8]),
        "options": _loads(row[9]),
        "error": _loads(row[10]),
        "duration_ms": duration_ms(row[5], finished),
    }


class Reader:
    """The journal and the audit store of one data directory, read-only; or,
    with `url`, the PostgreSQL store's (`_pg.py`)."""

    def __init__(self, journal: Path, audit: Path, url: str | None = None) -> None:
        self.journal = journal
        self.audit = audit
        self.url = url

    @contextmanager
    def _open(self, path: Path) -> Iterator[Any]:
        if self.url is None:
            with read_only(path) as conn:
                yield conn
            return
        from flightdeck.ui._pg import read_only_pg

        with read_only_pg(self.url, "runs" if path == self.journal else "records") as conn:
            yield conn

    # runs -------------------------------------------------------------------
    def runs(self, query: RunFilter) -> RunPage:
        where: list[str] = ["1=1"]
        args: list[str] = []
        if query.status:
            where.append("status = ?")
            args.append(query.status)
        if query.search:
            where.append("(instr(run_id, ?) > 0 OR instr(plan_name, ?) > 0)")
            args += [query.search, query.search]
        clause = " AND ".join(where)
        with self._open(self.journal) as conn:
            if conn is None:
                return RunPage([], 0, 0, 1)
            counted = conn.execute(f"SELECT count(*) FROM runs WHERE {clause}", args)
            total = int(counted.fetchone()[0])
            pages = max(1, -(-total // PAGE_SIZE))
            page = min(max(query.page, 0), pages - 1)
            rows = conn.execute(
                # Newest first by rowid, not started_at: the journal inserts a
                # run when it starts and never deletes one, so the orders agree,
                # and walking the rowid needs no sort of the whole table (the
                # journal has no index on started_at; this connection cannot add one).
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE {clause}"
                " ORDER BY rowid DESC LIMIT ? OFFSET ?",
                [*args, PAGE_SIZE, page * PAGE_SIZE],
            ).fetchall()
        return RunPage([_run(row) for row in rows], total, page, pages)

    def statuses(self) -> list[str]:
        with self._open(self.journal) as conn:
            if conn is None:
                return []
            return [r[0] for r in conn.execute("SELECT DISTINCT status FROM runs ORDER BY 1")]

    def run(self, run_id: str) -> dict[str, Any] | None:
        with self._open(self.journal) as conn:
            if conn is None:
                return None
            row = conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                return None
            run = _run(row)
            run["executor"] = _executor(conn, run_id)
            run["steps"] = [
                _step(r)
                for r in conn.execute(
                    "SELECT step_id, kind, status, started_at, finished_at, attempts, result,"
                    " error, approval FROM steps WHERE run_id = ? ORDER BY rowid",
                    (run_id,),
                )
            ]
            run["outputs"] = [
                {
                    "name": r[0],
                    "path": r[1],
                    "mime_type": r[2],
                    "sha256": r[3],
                    "bytes": r[4],
                    "preview": _preview(r[5], r[1], r[2]),
                }
                for r in conn.execute(
                    "SELECT name, path, mime_type, sha256, bytes, content FROM outputs"
                    " WHERE run_id = ? ORDER BY rowid",
                    (run_id,),
                )
            ]
        return run

    def fingerprint(self, run_id: str) -> str:
        """Changes whenever the run or one of its steps changes (live
        updates); empty when there is no such run."""
        with self._open(self.journal) as conn:
            if conn is None:
                return ""
            run = conn.execute(
                "SELECT status, finished_at FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            steps = conn.execute(
                "SELECT step_id, status, attempts, finished_at FROM steps WHERE run_id = ?"
                " ORDER BY rowid",
                (run_id,),
            ).fetchall()
        return json.dumps([run, steps]) if run is not None else ""

    # audit ------------------------------------------------------------------
    def records(
        self, query: AuditQuery, text: str | None = None, newest: int | None = None
    ) -> tuple[list[AuditRecord], bool]:
        """Records matching `query`, oldest first, and whether more matched
        than `newest` (then only the newest that many are returned).

        `run_id`, times and `text` (a substring of the record's JSON or
        kind) narrow in SQL; the rest is `AuditQuery.apply`, so the page and
        `flightdeck audit list` agree on what a filter means. With `newest`,
        rows are read newest first in batches and reading stops once enough
        matched: a store of 100,000 records is not decoded to show 500.
        (`AuditQuery.plan` selects whole runs, so it needs every record;
        the page does not offer it.)"""
        sql = "SELECT kind, run_id, timestamp, fields FROM records WHERE 1=1"
        args: list[str | int] = []
        if query.run_id is not None:
            sql += " AND run_id = ?"
            args.append(query.run_id)
        if query.since is not None:
            sql += " AND timestamp >= ?"
            args.append(query.since)
        if query.until is not None:
            sql += " AND timestamp <= ?"
            args.append(query.until)
        if text:
            sql += " AND (instr(fields, ?) > 0 OR instr(kind, ?) > 0)"
            args += [text, text]
        if query.kinds:
            either = []
            for kind in query.kinds:
                if kind.endswith(("*", ".")):
                    prefix = kind.rstrip("*")
                    either.append("substr(kind, 1, ?) = ?")
                    args += [len(prefix), prefix]
                else:
                    either.append("kind = ?")
                    args.append(kind)
            sql += " AND (" + " OR ".join(either) + ")"
        # A field value the query wants is in the stored JSON text; only
        # plain words, whose JSON spelling is themselves, narrow here.
        for wanted in (*query.where.values(), *([query.action] if query.action else [])):
            if _PLAIN.match(wanted) and wanted.lower() not in ("true", "false"):
                sql += " AND instr(fields, ?) > 0"
                args.append(wanted)
        with self._open(self.audit) as conn:
            if conn is None:
                return [], False
            if newest is None or query.plan is not None:
                rows = conn.execute(sql + " ORDER BY id", args).fetchall()
                kept = query.apply(_record(row) for row in rows)
                if newest is None or len(kept) <= newest:
                    return kept, False
                return kept[-newest:], True
            cursor = conn.execute(sql + " ORDER BY id DESC", args)
            found: list[AuditRecord] = []
            while len(found) <= newest:
                batch = cursor.fetchmany(1000)
                if not batch:
                    break
                found += query.apply(_record(row) for row in batch)
        found.reverse()
        return found[-newest:], len(found) > newest


def _record(row: tuple[Any, ...]) -> AuditRecord:
    kind, run_id, timestamp, fields = row
    return AuditRecord(kind=kind, run_id=run_id, timestamp=timestamp, fields=_fields(fields))


PREVIEW_CHARS = 2000
_TEXT_TYPES = ("text/", "application/json", "application/yaml", "application/xml")


def _preview(content: str | None, path: str | None, mime_type: str) -> str | None:
    """The start of an output: kept in the run record, or read from the file
    it was published to when that is text (and still there)."""
    if content is not None:
        return content[:PREVIEW_CHARS]
    if path is None or not mime_type.startswith(_TEXT_TYPES):
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(PREVIEW_CHARS * 4)
    except OSError:
        return None
    return head.decode("utf-8", errors="replace")[:PREVIEW_CHARS]


def _fields(text: str) -> dict[str, Any]:
    value = _loads(text)
    return value if isinstance(value, dict) else {"value": value}
