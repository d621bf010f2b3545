"""Open the run journal up front, so that a damaged one is an error value.

`flightdeck.launch.Journal` lets `sqlite3` and OS errors escape (a garbage
`runs.sqlite3`, a data directory that is a file). Until it raises a typed
error itself, the commands that use it open it here first and report
`journal.unusable` with the file's path.
"""

from __future__ import annotations

import sqlite3

from flightdeck.launch import Journal, LaunchError


def open_journal(journal: Journal) -> Journal:
    """`journal`, after a first read; raises `LaunchError('journal.unusable')`."""
    try:
        journal.runs(1)
    except (sqlite3.DatabaseError, OSError) as exc:
        reason = str(exc)
        if isinstance(exc, OSError) and exc.strerror:  # "File exists: .../data" (a file)
            reason = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
        raise LaunchError(
            "journal.unusable",
            f"the run journal {journal.path} cannot be used: {reason}",
            hint="move the file aside to start a new journal (or check FLIGHTDECK_HOME)",
        ) from None
    return journal
