"""Audit: one small interface every layer records through.

    from flightdeck.audit import AuditRecord, default_sink
    sink = default_sink()                       # SQLite in the user data dir
    sink.record(AuditRecord("io.stage", run_id, {"key": "src", "sha256": "..."}))
    sink.records(run_id=run_id)                 # oldest first

A sink implements `AuditSink.record(event)`; the stores shipped here also
implement `AuditReader.records(run_id=None, kind=None)`. Records are
`AuditRecord(kind, run_id, fields, timestamp)` with `fields` plain JSON.
`SQLiteAuditSink` (default file `data_dir()/audit.sqlite3`, WAL, append-only
named migrations), `JsonlAuditSink` (one JSON object per line, the same shape
as `AuditRecord.to_dict()`) and `MemoryAuditSink` (tests). A SQLite store that
cannot be opened (not a database, its folder is a file) raises `AuditStoreError`.
With a PostgreSQL store configured (`[store] url`, `FLIGHTDECK_DATABASE_URL`)
the default store is `PostgresAuditSink` there, the same records in the
database the run journal uses. Both stores answer `query(AuditQuery)` in SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck._lazy import LazyNames as _LazyNames
from flightdeck.audit._errors import AuditStoreError
from flightdeck.audit._jsonl import JsonlAuditSink
from flightdeck.audit._memory import MemoryAuditSink
from flightdeck.audit._record import AuditReader, AuditRecord, AuditSink, utc_now
from flightdeck.audit._sqlite import SQLiteAuditSink
from flightdeck.config import ConfigError, StoreError, data_dir, store_url

if TYPE_CHECKING:
    from flightdeck.audit._lifecycle import (
        ENTRY_POINT_GROUP,
        Dispatcher,
        Hook,
        LifecycleEvent,
        fire,
        flush_events,
        hooks_from_config,
    )
    from flightdeck.audit._postgres import PostgresAuditSink
    from flightdeck.audit._query import AuditQuery, AuditQueryError, parse_time, parse_where

# Imported on first use (PEP 562): a command that only records or reads
# pays neither for the event thread and subprocess machinery nor for queries.
_LAZY = {
    **dict.fromkeys(
        [
            "ENTRY_POINT_GROUP",
            "Dispatcher",
            "Hook",
            "LifecycleEvent",
            "fire",
            "flush_events",
            "hooks_from_config",
        ],
        "flightdeck.audit._lifecycle",
    ),
    "PostgresAuditSink": "flightdeck.audit._postgres",
    **dict.fromkeys(
        ["AuditQuery", "AuditQueryError", "parse_time", "parse_where"], "flightdeck.audit._query"
    ),
}


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    return _LAZY_NAMES.load(name)


DEFAULT_FILE = "audit.sqlite3"


def default_sink() -> SQLiteAuditSink | PostgresAuditSink:
    """The configured PostgreSQL store, else the SQLite store at
    `flightdeck.config.data_dir()/audit.sqlite3` (both opened lazily). A bad
    store URL raises `AuditStoreError` (`database.bad_url`)."""
    try:
        url = store_url()
    except StoreError as exc:
        raise AuditStoreError(exc.code, exc.location, exc.reason) from None
    except ConfigError:  # reported by whatever reads the config; records still land
        url = None
    if url is not None:
        from flightdeck.audit._postgres import PostgresAuditSink

        return PostgresAuditSink(url)
    return SQLiteAuditSink(data_dir() / DEFAULT_FILE)


def list_records(
    sink: AuditReader | None = None, *, run_id: str | None = None, kind: str | None = None
) -> list[AuditRecord]:
    """Records of `sink` (default: the default store), filtered, oldest first."""
    return (sink or default_sink()).records(run_id=run_id, kind=kind)


def open_store(spec: str | None = None) -> AuditReader:
    """The default store, or `sqlite:PATH` / `jsonl:PATH` (a configured
    `[audit.sinks]` target), a `postgresql://` URL, or a bare path
    (`.jsonl` → JSONL, else SQLite)."""
    if spec is None:
        return default_sink()
    scheme, sep, where = spec.partition(":")
    if sep and scheme == "jsonl":
        return JsonlAuditSink(Path(where).expanduser())
    if sep and scheme in ("postgresql", "postgres"):
        from flightdeck.audit._postgres import PostgresAuditSink

        return PostgresAuditSink(spec)
    if sep and scheme == "sqlite":
        return SQLiteAuditSink(Path(where).expanduser())
    path = Path(spec).expanduser()
    return JsonlAuditSink(path) if path.suffix == ".jsonl" else SQLiteAuditSink(path)


__all__ = [
    "DEFAULT_FILE",
    "ENTRY_POINT_GROUP",
    "AuditQuery",
    "AuditQueryError",
    "AuditReader",
    "AuditRecord",
    "AuditSink",
    "AuditStoreError",
    "Dispatcher",
    "Hook",
    "JsonlAuditSink",
    "LifecycleEvent",
    "MemoryAuditSink",
    "PostgresAuditSink",
    "SQLiteAuditSink",
    "default_sink",
    "fire",
    "flush_events",
    "hooks_from_config",
    "list_records",
    "open_store",
    "parse_time",
    "parse_where",
    "utc_now",
]
