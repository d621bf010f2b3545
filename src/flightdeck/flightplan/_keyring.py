"""The keyring: which Ed25519 keys are trusted to publish for which authority.

Stored as `<data_dir>/keyring.json`. A key trusted for `github://owner` is
trusted for every `github://owner/<repo>` too; a key trusted for
`github://owner/repo` only for that repository.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from flightdeck.config import data_dir
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import PUBLISHER
from flightdeck.flightplan._signing import key_id, load_public_key, public_pem


@dataclass(frozen=True)
class TrustedKey:
    publisher: str
    key_id: str
    public_key_pem: str
    added_at: str

    def to_dict(self) -> dict[str, str]:
        return {
            "publisher": self.publisher,
            "keyId": self.key_id,
            "publicKey": self.public_key_pem,
            "addedAt": self.added_at,
        }


class Keyring:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else data_dir() / "keyring.json"

    def entries(self) -> list[TrustedKey]:
        return sorted(self._read(), key=lambda k: (k.publisher, k.key_id))

    def trust(self, publisher: str, pem: bytes) -> TrustedKey:
        _check_publisher(publisher)
        public = load_public_key(pem, code="keyring.invalid_key")
        entry = TrustedKey(
            publisher,
            key_id(public),
            public_pem(public).decode("ascii"),
            datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        with self._lock():
            keys = self._read()
            for k in keys:
                if k.publisher == publisher and k.key_id == entry.key_id:
                    return k
            self._write([*keys, entry])
        return entry

    def untrust(self, publisher: str, key: str | None = None) -> int:
        """Remove the publisher's keys (only `key`, a key id, when given)."""
        _check_publisher(publisher)
        with self._lock():
            return self._untrust(publisher, key)

    def _untrust(self, publisher: str, key: str | None) -> int:
        keys = self._read()
        kept = [
            k for k in keys if not (k.publisher == publisher and (key is None or k.key_id == key))
        ]
        if len(kept) == len(keys):
            raise FlightPlanError(
                "keyring.not_trusted", f"no matching key is trusted for {publisher}"
            )
        self._write(kept)
        return len(keys) - len(kept)

    def trusted_for(self, publisher: str) -> list[TrustedKey]:
        """Keys trusted for `publisher`, including owner-wide ones."""
        owner = "/".join(publisher.split("/")[:3])  # github://owner
        return [k for k in self._read() if k.publisher in (publisher, owner)]

    def _lock(self) -> FileLock:
        # Read-change-replace under one lock: two concurrent `keyring trust`
        # calls must not lose an entry.
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            # The data dir is a file or not ours: the keyring cannot even be read.
            raise FlightPlanError(
                "keyring.unreadable", f"cannot read keyring {self.path}: {exc.strerror or exc}"
            ) from None
        return FileLock(str(self.path) + ".lock")

    def _read(self) -> list[TrustedKey]:
        try:
            raw = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return []
        except OSError as exc:  # a directory, a data dir that is a file
            raise FlightPlanError(
                "keyring.unreadable", f"cannot read keyring {self.path}: {exc.strerror or exc}"
            ) from None
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep
            raise FlightPlanError(
                "keyring.unreadable", f"cannot read keyring {self.path}: {exc}"
            ) from None
        items: Any = raw.get("keys", []) if isinstance(raw, dict) else None
        if not isinstance(items, list):
            # Treating a damaged keyring as empty would silently distrust every
            # publisher; say what is wrong instead.
            raise FlightPlanError(
                "keyring.unreadable",
                f'cannot read keyring {self.path}: expected {{"keys": [...]}}',
                hint="fix or remove the file, then trust the publishers' keys again",
            )
        return [
            TrustedKey(i["publisher"], i["keyId"], i["publicKey"], i.get("addedAt", ""))
            for i in items
            if isinstance(i, dict)
            and all(isinstance(i.get(f), str) for f in ("publisher", "keyId", "publicKey"))
        ]

    def _write(self, keys: list[TrustedKey]) -> None:
        try:
            self._replace(keys)
        except OSError as exc:
            raise FlightPlanError(
                "keyring.unwritable", f"cannot write keyring {self.path}: {exc.strerror or exc}"
            ) from None

    def _replace(self, keys: list[TrustedKey]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {
            "version": 1,
            "keys": [k.to_dict() for k in sorted(keys, key=lambda k: (k.publisher, k.key_id))],
        }
        fd, temp = tempfile.mkstemp(prefix=".keyring-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(body, handle, indent=2)
            handle.write("\n")
        os.replace(temp, self.path)


def _check_publisher(publisher: str) -> None:
    if not PUBLISHER.match(publisher):
        raise FlightPlanError(
            "keyring.invalid_publisher",
            f"'{publisher}' is not github://owner or github://owner/repo",
        )
