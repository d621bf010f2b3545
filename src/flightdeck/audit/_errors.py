"""The one error an audit store raises: the store itself cannot be used."""

from __future__ import annotations

from pathlib import Path


class AuditStoreError(Exception):
    """The audit store at `path` cannot be opened: the file is not a SQLite
    database (`audit.store_corrupt`) or cannot be created or read
    (`audit.store_unusable`, e.g. its folder is a file); for the PostgreSQL
    store, `path` is its URL without the password and the codes are the
    store's (`database.unreachable`, `database.migration_failed`, ...)."""

    def __init__(self, code: str, path: Path | str, message: str) -> None:
        super().__init__(f"audit store {path}: {message}")
        self.code = code
        self.path = path
        self.message = f"audit store {path}: {message}"

    def describe(self) -> str:
        return f"error: {self.message} [{self.code}]"

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "file": str(self.path)}
