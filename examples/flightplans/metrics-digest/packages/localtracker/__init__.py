"""A tiny local issue tracker: issues in a SQLite file, idempotent by key."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from pathlib import Path


def _store() -> Path:
    default = Path(tempfile.gettempdir()) / "flightdeck-demo-tracker.sqlite3"
    return Path(os.environ.get("LOCAL_TRACKER_DB") or default)


def create_issue(title: str, body: str, token: str, idempotency_key: str = "") -> dict[str, object]:
    if not token:
        raise PermissionError("the tracker needs an API token")
    path = _store()
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS issues (id INTEGER PRIMARY KEY, key TEXT UNIQUE,"
            " title TEXT, body TEXT, reporter TEXT)"
        )
        if idempotency_key:
            row = db.execute(
                "SELECT id, title FROM issues WHERE key = ?", (idempotency_key,)
            ).fetchone()
            if row is not None:
                return _issue(row[0], row[1], idempotency_key, created=False)
        reporter = _reporter(token)
        cursor = db.execute(
            "INSERT INTO issues (key, title, body, reporter) VALUES (?, ?, ?, ?)",
            (idempotency_key or None, title, body, reporter),
        )
        return _issue(int(cursor.lastrowid or 0), title, idempotency_key, created=True)


def whoami(token: str) -> dict[str, object]:
    """The credential probe: accepts any non-empty token, files nothing."""
    if not token:
        return {"ok": False}
    return {"ok": True, "reporter": _reporter(token)}


def _reporter(token: str) -> str:
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:8]


def _issue(number: int, title: str, key: str, *, created: bool) -> dict[str, object]:
    return {
        "id": number,
        "key": key,
        "title": title,
        "url": f"tracker://local/issues/{number}",
        "created": created,
        "assignee": {"name": "Digest Bot", "email": "digest-bot@example.com"},
    }
