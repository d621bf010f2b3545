"""Where the shared store is: `FLIGHTDECK_DATABASE_URL`, else `[store] url`
in the user's config.toml; neither means the embedded SQLite files under
`data_dir()`. A workspace's flightdeck.toml cannot set it: the store is the
machine's (a project must not point a user's journal at its own server).

Also what every PostgreSQL store shares: one psycopg pool per URL and
process, the error a store that cannot be reached becomes, and the password
masked wherever a URL is shown. psycopg is imported here on first use only,
so a command that reads no PostgreSQL store never imports it.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from flightdeck._errors import FlightdeckError
from flightdeck.config._files import ConfigError, _read
from flightdeck.config._paths import config_dir

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

ENV = "FLIGHTDECK_DATABASE_URL"
_SCHEMES = ("postgresql", "postgres")
_POOLS: dict[str, ConnectionPool] = {}
_LOCK_POOLS: dict[str, ConnectionPool] = {}
_POOLS_LOCK = threading.Lock()


class StoreError(FlightdeckError):
    """The shared store cannot be used: a bad URL (`database.bad_url`), a server
    that does not answer or refuses us (`database.unreachable`), a schema change
    that failed (`database.migration_failed`), psycopg not installed
    (`database.driver_missing`). `location` is the URL with its password masked."""

    fields = ("code", "message", "location", "hint")
    hint_prefix = "  hint: "
    __str__ = Exception.__str__  # the message alone, which names the store

    def __init__(self, code: str, location: str, message: str, hint: str | None = None) -> None:
        super().__init__(code, f"store {location}: {message}", hint=hint)
        self.location = location
        self.reason = message


def mask_url(url: str) -> str:
    """`url` with any password replaced by `***` (for output and errors)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unreadable store url>"
    if password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def store_url(environ: dict[str, str] | None = None) -> str | None:
    """The configured PostgreSQL URL, or None for the SQLite files. Raises
    `StoreError("database.bad_url")` for a value that is not a postgresql:// URL
    and `ConfigError` for an unreadable config.toml."""
    env = os.environ if environ is None else environ
    url: Any = env.get(ENV) or None
    source = ENV
    if url is None:
        path = config_dir() / "config.toml"
        table = (_read(path) or {}).get("store")
        if table is not None and not isinstance(table, dict):
            raise ConfigError(path, "[store] is not a table")
        url = (table or {}).get("url")
        source = f"{path} [store] url"
    if url is None or url == "":
        return None
    if not isinstance(url, str) or urlsplit(url).scheme not in _SCHEMES:
        shown = mask_url(url) if isinstance(url, str) else repr(url)
        raise StoreError(
            "database.bad_url",
            shown,
            f"{source} is not a postgresql:// URL",
            hint="postgresql://USER:PASSWORD@HOST:5432/DATABASE, or unset it for SQLite",
        )
    return url


DEFAULT_OUTPUT_LIMIT = 256 * 1024 * 1024


def output_limit() -> int:
    """`[store] max_output_bytes` in the user's config.toml: the largest
    output the run journal keeps (either backend), default 256 MiB. A
    workspace cannot set it, like the URL. `ConfigError` for a value that is
    not a positive integer, or an unreadable config.toml."""
    path = config_dir() / "config.toml"
    table = (_read(path) or {}).get("store")
    value = table.get("max_output_bytes") if isinstance(table, dict) else None
    if value is None:
        return DEFAULT_OUTPUT_LIMIT
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(path, "[store] max_output_bytes is not a positive number of bytes")
    return value


def unreachable(url: str, exc: BaseException) -> StoreError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    # psycopg's messages may quote the connection string; never its password.
    parts = urlsplit(url)
    if parts.password:
        reason = reason.replace(parts.password, "***")
    return StoreError(
        "database.unreachable",
        mask_url(url),
        f"cannot connect: {reason}",
        hint="is the server up and the URL right? (`flightdeck config show`)",
    )


def pool(url: str) -> ConnectionPool:
    """The process's pool for `url`, opened on first use: it connects once
    now, so a database that is down is a `StoreError`, not a later hang."""
    with _POOLS_LOCK:
        found = _POOLS.get(url)
        if found is not None:
            return found
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StoreError(
                "database.driver_missing",
                mask_url(url),
                "the PostgreSQL driver (psycopg) is not installed",
                hint="pip install 'flightdeck[postgres]'",
            ) from None
        try:
            # One connection first: a server that is down, a wrong password or
            # a bad URL is reported now, with psycopg's reason, instead of as
            # a pool that keeps retrying in the background.
            psycopg.connect(url, connect_timeout=10).close()
        except (psycopg.Error, OSError, ValueError) as exc:
            raise unreachable(url, exc) from None
        # `check`: the pool tries each connection before handing it out and
        # replaces one that fails, so a server restarted between two
        # commands of a long-lived process (a worker, the ui) costs a
        # reconnect, not a failed query (`_check`).
        opened = ConnectionPool(
            url,
            min_size=1,
            max_size=8,
            kwargs={"autocommit": True, "connect_timeout": 10},
            check=_check,
            open=True,
            name="flightdeck",
        )
        _POOLS[url] = opened
        return opened


# How many runs one process may walk at once on a PostgreSQL store: each walk
# holds one of these connections for its run's lock. Far above any real use
# (a web view's resumes, an embedder's concurrent launches); connections are
# opened as walks need them and closed after ten idle minutes.
LOCK_CONNECTIONS = 256


def lock_pool(url: str) -> ConnectionPool:
    """The process's pool of connections that hold run locks (session
    advisory locks) for `url`: apart from `pool`, so walks holding locks never
    starve the journal's writes, and reused, so a launch does not pay a new
    server session (about 2.6 ms here, against 0.04 ms for a query). A
    connection handed back is cleared of every advisory lock first."""
    with _POOLS_LOCK:
        found = _LOCK_POOLS.get(url)
        if found is not None:
            return found
    pool(url)  # the store's own checks and errors, once
    from psycopg_pool import ConnectionPool

    with _POOLS_LOCK:
        found = _LOCK_POOLS.get(url)
        if found is None:
            found = _LOCK_POOLS[url] = ConnectionPool(
                url,
                min_size=0,
                max_size=LOCK_CONNECTIONS,
                kwargs={"autocommit": True, "connect_timeout": 10},
                check=_check,
                reset=_unlock_all,
                open=True,
                name="flightdeck-locks",
            )
        return found


def _unlock_all(conn: Any) -> None:
    # A walk unlocks its run as it ends; should that have failed, the lock
    # must not pass to the next walk this connection serves (session
    # advisory locks are re-entrant: that walk would take any run).
    conn.execute("SELECT pg_advisory_unlock_all()")


def _check(conn: Any) -> None:
    """The pool's check of an idle connection, a round trip only when the
    connection may be gone. A server that ends a session (a restart, a
    shutdown, `pg_terminate_backend`, an idle timeout) sends its FATAL and
    closes the socket, so the socket of a connection it ended has something
    to read; an idle autocommit connection of ours is sent nothing else.
    Such a connection, or one psycopg already knows is closed, gets
    psycopg_pool's own check (an empty query), which raises for a dead one;
    the rest are handed out without it (it was one round trip more per
    checkout, the largest PostgreSQL share of a Temporal step)."""
    import select

    from psycopg_pool import ConnectionPool

    readable = True
    if not conn.closed:
        # A poll object is a plain list in Python, where a selector is an
        # epoll instance: two system calls more per checkout.
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        readable = bool(poller.poll(0))
    if readable:
        ConnectionPool.check_connection(conn)


def close_pools() -> None:
    """Close every pool this process opened (tests; a worker that stops)."""
    with _POOLS_LOCK:
        for opened in [*_POOLS.values(), *_LOCK_POOLS.values()]:
            opened.close()
        _POOLS.clear()
        _LOCK_POOLS.clear()
        _CURRENT.clear()


# The lock every process that migrates a store takes (an advisory lock, held
# to the end of the migrating transaction): with it, two processes opening a
# new database at once apply each migration once between them.
_MIGRATION_LOCK = 0x66640001
# (url, store) whose schema this process found or brought up to date: a
# store opened again (each `Journal()` and audit sink a launch makes) is
# not asked again; migrations are append-only, so it stays current.
_CURRENT: set[tuple[str, str]] = set()


def migrate_postgres(url: str, store: str, migrations: tuple[tuple[str, str], ...]) -> None:
    """Apply `store`'s missing named migrations (the same names, in the same
    order, as its SQLite history) in one transaction, recorded in
    `_migrations (store, name)`. A failed one is `database.migration_failed`
    and nothing of it stays."""
    import psycopg

    if (url, store) in _CURRENT:
        pool(url)  # the pool is still opened (and a server that is down reported) here
        return
    try:
        with pool(url).connection() as conn:
            names = {name for name, _ in migrations}
            if _applied(conn, store) >= names:
                _CURRENT.add((url, store))
                return  # the common case: no lock for a schema that is current
            with conn.transaction():
                # Under the lock even the bookkeeping table's creation: two
                # processes creating it at once collide in PostgreSQL's catalog.
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS _migrations (store TEXT NOT NULL,"
                    " name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
                    " PRIMARY KEY (store, name))"
                )
                done = _applied(conn, store)
                for name, sql in migrations:
                    if name not in done:
                        conn.execute(sql.encode())  # constants of this package, several statements
                        conn.execute(
                            "INSERT INTO _migrations (store, name) VALUES (%s, %s)", (store, name)
                        )
        _CURRENT.add((url, store))
    except psycopg.OperationalError as exc:
        raise unreachable(url, exc) from None
    except psycopg.Error as exc:
        raise StoreError(
            "database.migration_failed",
            mask_url(url),
            f"the {store} schema could not be brought up to date: {str(exc).strip()}",
            hint="the database user needs CREATE on the database; see the server's log",
        ) from None


def _applied(conn: Any, store: str) -> set[str]:
    if conn.execute("SELECT to_regclass('_migrations')").fetchone()[0] is None:
        return set()
    rows = conn.execute("SELECT name FROM _migrations WHERE store = %s", (store,)).fetchall()
    return {row[0] for row in rows}
