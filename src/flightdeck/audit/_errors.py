"""The one error an audit store raises: the store itself cannot be used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flightdeck._errors import FlightdeckError


class AuditStoreError(FlightdeckError):
    """The audit store at `path` cannot be opened: the file is not a SQLite
    database (`audit.store_corrupt`) or cannot be created or read
    (`audit.store_unusable`, e.g. its folder is a file)."""

    fields = ("code", "message", "file")
    __str__ = Exception.__str__  # the message alone, which names the store

    def __init__(self, code: str, path: Path, message: str) -> None:
        super().__init__(code, f"audit store {path}: {message}")
        self.path = path

    def field_value(self, name: str) -> Any:
        return str(self.path) if name == "file" else super().field_value(name)
