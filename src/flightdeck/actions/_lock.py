"""`flightdeck.lock`: the sha256 of every action a workspace resolved.

JSON (the standard library reads and writes it; TOML would need a writer
dependency), sorted keys, one entry per ref key:

    {"version": 1,
     "actions": {"@agentik/actions-standard/storage-commit":
                   {"id": "storage:commit", "version": "1.0.0",
                    "sha256": "...", "source": "vendor/std/.actions/storage-commit/ACTION.md"}}}

`source` is relative to the lock's folder (the workspace), so the file
travels between machines; it is informational, the sha256 is what counts.
`flightdeck lock` (create, update, check) is the only writer of a workspace's
lock; `validate` reads it to report trust downgrades and never writes it.
A later resolution to different content is a trust downgrade.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck._json import read_json

LOCK_FILE = "flightdeck.lock"


@dataclass(frozen=True)
class LockEntry:
    id: str
    version: str
    sha256: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {
            "id": self.id,
            "version": self.version,
            "sha256": self.sha256,
            "source": self.source,
        }


class Lock:
    """A workspace lock file, loaded lazily and saved atomically."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._entries: dict[str, LockEntry] | None = None
        self._dirty = False
        self._mutex = threading.Lock()

    @classmethod
    def for_workspace(cls, workspace: Path) -> Lock:
        return cls(workspace / LOCK_FILE)

    @classmethod
    def empty(cls, path: str | Path) -> Lock:
        """A lock that ignores what is on disk: for recording a fresh resolution."""
        lock = cls(path)
        lock._entries = {}
        return lock

    def relative(self, source: Path | str | None) -> str:
        """`source` relative to the lock's folder, '/'-separated."""
        if not source:
            return ""
        rel = os.path.relpath(Path(source).resolve(), self.path.parent.resolve())
        return Path(rel).as_posix()

    def write(self, entries: dict[str, LockEntry]) -> None:
        """Replace the file with exactly `entries` (atomic)."""
        with self._mutex:
            self._entries = dict(entries)
            self._write(self._entries)
            self._dirty = False

    def _load(self) -> dict[str, LockEntry]:
        if self._entries is None:
            self._entries = {}
            try:
                raw: Any = read_json(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raw = {}
            actions = raw.get("actions", {}) if isinstance(raw, dict) else {}
            for key, value in actions.items() if isinstance(actions, dict) else ():
                try:
                    self._entries[key] = LockEntry(**value)
                except TypeError:
                    continue  # a hand-edited entry we cannot read is treated as absent
        return self._entries

    def get(self, key: str) -> LockEntry | None:
        with self._mutex:
            return self._load().get(key)

    def entries(self) -> dict[str, LockEntry]:
        with self._mutex:
            return dict(self._load())

    def observe(self, key: str, entry: LockEntry, *, relock: bool = False) -> LockEntry | None:
        """Record `entry`; return the previous entry when its sha256 differs.

        A differing entry is only replaced when `relock` is true.
        """
        with self._mutex:
            entries = self._load()
            old = entries.get(key)
            if old is not None and old.sha256 != entry.sha256:
                if relock:
                    entries[key] = entry
                    self._dirty = True
                return old
            if old != entry:
                entries[key] = entry
                self._dirty = True
            return None

    def save(self) -> bool:
        """Write the file if anything changed; True when written."""
        with self._mutex:
            if not self._dirty or self._entries is None:
                return False
            # Keep entries another process wrote since we loaded (last writer must not drop them).
            on_disk = Lock(self.path)._load()
            self._write({**on_disk, **self._entries})
            self._dirty = False
            return True

    def _write(self, entries: dict[str, LockEntry]) -> None:
        body = {
            "version": 1,
            "actions": {k: v.to_dict() for k, v in sorted(entries.items())},
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".flightdeck.lock.", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, self.path)
