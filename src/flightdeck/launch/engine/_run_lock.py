"""The one-walk rule: one process at a time walks a run. A launch takes
its run's lock before its first journal write and keeps it to the end; a
second `launch --resume` of that run (another terminal, a second web view,
another machine) is refused with `resume.running` instead of walking it
twice. The database holds the lock, so it ends with the process that held
it, kill -9 included:

- PostgreSQL: a session advisory lock, on a connection kept for the walk
  (the server drops it when that connection closes), taken from a pool of
  lock connections (`config._database.lock_pool`). Not the journal's pool:
  a process walking more runs at once than that pool holds (an embedder's
  concurrent launches) would starve its own journal writes;
- SQLite: a file lock (`filelock`, flock) beside the journal, in
  `run-locks/RUN.lock` (the kernel drops it when the process ends).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from flightdeck.launch.core._errors import LaunchError

if TYPE_CHECKING:
    from flightdeck.launch.engine._journal import Journal


def _busy(run_id: str) -> LaunchError:
    return LaunchError(
        "resume.running",
        f"run {run_id} is being walked by another process",
        hint="wait for that launch or resume to pause or end (`flightdeck runs show`)",
    )


@contextmanager
def run_lock(journal: Journal, run_id: str) -> Iterator[None]:
    """Hold `run_id`'s lock for the block; `resume.running` if another has it."""
    if journal.url is not None:
        with _advisory(journal.url, run_id):
            yield
        return
    from filelock import FileLock, Timeout

    folder = journal.path.parent / "run-locks"
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / f"{run_id}.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise _busy(run_id) from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def _advisory(url: str, run_id: str) -> Iterator[None]:
    import psycopg
    from psycopg_pool import PoolTimeout

    from flightdeck.config._database import StoreError, lock_pool, unreachable

    key = f"flightdeck.run:{run_id}"
    try:
        with lock_pool(url).connection() as conn:
            row = conn.execute(
                "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
            ).fetchone()
            if not (row and row[0]):
                raise _busy(run_id)
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
    except StoreError as exc:
        raise LaunchError(exc.code, exc.message, hint=exc.hint) from None
    except (psycopg.OperationalError, PoolTimeout) as exc:
        error = unreachable(url, exc)
        raise LaunchError(error.code, error.message, hint=error.hint) from None
