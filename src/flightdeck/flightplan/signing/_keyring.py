"""The keyring: which Ed25519 keys are trusted to publish for which authority,
which plan names are pinned to which keys, and which keys are revoked.

Stored as `<data_dir>/keyring.json`. A key trusted for `github://owner` is
trusted for every `github://owner/<repo>` too; a key trusted for
`github://owner/repo` only for that repository. A plan frozen without a
publisher is vouched for by a key pinned for its *name*. A revoked key
never counts, whatever entries still name it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from filelock import FileLock

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.config import data_dir
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import PUBLISHER, SKILL_NAME
from flightdeck.flightplan._limits import STATE_FILE_BYTES
from flightdeck.flightplan.signing._passphrase import Passphrase
from flightdeck.flightplan.signing._signing import (
    key_id,
    load_private_key,
    load_public_key,
    public_pem,
)

KEY_ID = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class TrustedKey:
    """A key trusted for a publisher, or (publisher None) pinned for a plan name."""

    publisher: str | None
    key_id: str
    public_key_pem: str
    added_at: str
    plan: str | None = None

    @property
    def scope(self) -> str:
        return self.publisher if self.publisher is not None else f"plan {self.plan}"

    def to_dict(self) -> dict[str, str]:
        where = {"publisher": self.publisher} if self.publisher else {"plan": self.plan or ""}
        return {
            **where,
            "key_id": self.key_id,
            "public_key": self.public_key_pem,
            "added_at": self.added_at,
        }


@dataclass(frozen=True)
class Revocation:
    key_id: str
    revoked_at: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"key_id": self.key_id, "revoked_at": self.revoked_at, "reason": self.reason}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Keyring:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else data_dir() / "keyring.json"

    def entries(self) -> list[TrustedKey]:
        return _sorted(self._read()[0])

    def revocations(self) -> list[Revocation]:
        return sorted(self._read()[1], key=lambda r: r.key_id)

    def revoked(self) -> dict[str, Revocation]:
        return {r.key_id: r for r in self._read()[1]}

    def trust(self, publisher: str, pem: bytes, *, force: bool = False) -> TrustedKey:
        _check_publisher(publisher)
        return self._add(publisher, None, pem, force)

    def trust_plan(self, plan: str, pem: bytes, *, force: bool = False) -> TrustedKey:
        """Pin `pem` for the plan name `plan` (a plan frozen without a publisher)."""
        _check_plan(plan)
        return self._add(None, plan, pem, force)

    def _add(self, publisher: str | None, plan: str | None, pem: bytes, force: bool) -> TrustedKey:
        public = load_public_key(pem, code="keyring.invalid_key")
        entry = TrustedKey(
            publisher, key_id(public), public_pem(public).decode("ascii"), _now(), plan
        )
        with self._lock():
            keys, revoked = self._read()
            if any(r.key_id == entry.key_id for r in revoked):
                if not force:
                    raise FlightPlanError(
                        "keyring.key_revoked",
                        f"{entry.key_id} is revoked; trusting it again needs --force",
                        hint="check with the key's owner why it was revoked "
                        "('flightdeck keyring list' shows the reason)",
                    )
                # --force lifts the revocation: a key still revoked would count for nothing.
                revoked = [r for r in revoked if r.key_id != entry.key_id]
            for k in keys:
                if (k.publisher, k.plan, k.key_id) == (publisher, plan, entry.key_id):
                    self._write(keys, revoked)
                    return k
            self._write([*keys, entry], revoked)
        return entry

    def untrust(self, publisher: str, key: str | None = None) -> int:
        """Remove the publisher's keys (only `key`, a key id, when given)."""
        _check_publisher(publisher)
        with self._lock():
            return self._untrust(publisher, None, key)

    def untrust_plan(self, plan: str, key: str | None = None) -> int:
        """Remove the keys pinned for a plan name (only `key` when given)."""
        _check_plan(plan)
        with self._lock():
            return self._untrust(None, plan, key)

    def _untrust(self, publisher: str | None, plan: str | None, key: str | None) -> int:
        keys, revoked = self._read()
        kept = [
            k
            for k in keys
            if not ((k.publisher, k.plan) == (publisher, plan) and key in (None, k.key_id))
        ]
        if len(kept) == len(keys):
            where = publisher or f"plan {plan}"
            raise FlightPlanError("keyring.not_trusted", f"no matching key is trusted for {where}")
        self._write(kept, revoked)
        return len(keys) - len(kept)

    def revoke(self, key: str, reason: str = "") -> Revocation:
        """Record `key` (a key id) as revoked. Trusted or not: a key reported
        stolen can be refused before anyone trusts it. Revoking twice keeps
        the first record."""
        if not KEY_ID.match(key):
            raise FlightPlanError(
                "keyring.invalid_key_id",
                f"{key!r} is not a key id",
                hint="sha256: and 64 lowercase hex digits, as 'flightdeck keyring list' shows",
            )
        with self._lock():
            keys, revoked = self._read()
            for known in revoked:
                if known.key_id == key:
                    return known
            record = Revocation(key, _now(), reason)
            self._write(keys, [*revoked, record])
        return record

    def trusted_for(self, publisher: str) -> list[TrustedKey]:
        """Keys trusted for `publisher`, including owner-wide ones (revoked too:
        the caller tells a revoked key from an unknown one)."""
        owner = "/".join(publisher.split("/")[:3])  # github://owner
        return [k for k in self._read()[0] if k.publisher in (publisher, owner)]

    def pinned_for(self, plan: str) -> list[TrustedKey]:
        """Keys pinned for the plan name `plan` (revoked ones included)."""
        return [k for k in self._read()[0] if k.plan == plan and k.publisher is None]

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

    def _read(self) -> tuple[list[TrustedKey], list[Revocation]]:
        try:
            raw = read_json(read_regular(self.path, STATE_FILE_BYTES).decode("utf-8"))
        except FileNotFoundError:
            return [], []
        except OSError as exc:  # a directory, a data dir that is a file
            raise FlightPlanError(
                "keyring.unreadable", f"cannot read keyring {self.path}: {exc.strerror or exc}"
            ) from None
        except ValueError as exc:  # not JSON, not UTF-8, nested too deep
            raise FlightPlanError(
                "keyring.unreadable", f"cannot read keyring {self.path}: {exc}"
            ) from None
        items: Any = raw.get("keys", []) if isinstance(raw, dict) else None
        revoked: Any = raw.get("revoked", []) if isinstance(raw, dict) else None
        if not isinstance(items, list) or not isinstance(revoked, list):
            # Treating a damaged keyring as empty would silently distrust every
            # publisher (or forget every revocation); say what is wrong instead.
            raise FlightPlanError(
                "keyring.unreadable",
                f'cannot read keyring {self.path}: expected {{"keys": [...], "revoked": [...]}}',
                hint="fix or remove the file, then trust the publishers' keys again",
            )
        # Keyrings written before the snake_case change say keyId/publicKey/addedAt.
        keys = [_key(_snake_entry(i)) for i in items if isinstance(i, dict)]
        revocations = [_revocation(_snake_entry(r)) for r in revoked if isinstance(r, dict)]
        return [k for k in keys if k], [r for r in revocations if r]

    def _write(self, keys: list[TrustedKey], revoked: list[Revocation]) -> None:
        body = {
            "version": 1,
            "keys": [k.to_dict() for k in _sorted(keys)],
            "revoked": [r.to_dict() for r in sorted(revoked, key=lambda r: r.key_id)],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".keyring-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(body, handle, indent=2)
                handle.write("\n")
            os.replace(temp, self.path)
        except OSError as exc:
            raise FlightPlanError(
                "keyring.unwritable", f"cannot write keyring {self.path}: {exc.strerror or exc}"
            ) from None


def _key(item: object) -> TrustedKey | None:
    if not isinstance(item, dict):
        return None
    if not all(isinstance(item.get(f), str) for f in ("key_id", "public_key")):
        return None
    publisher, plan = item.get("publisher"), item.get("plan")
    if isinstance(publisher, str):
        plan = None
    elif not isinstance(plan, str):
        return None  # neither a publisher nor a plan: it vouches for nothing
    return TrustedKey(
        publisher if isinstance(publisher, str) else None,
        item["key_id"],
        item["public_key"],
        str(item.get("added_at", "")),
        plan,
    )


def _revocation(item: object) -> Revocation | None:
    if not isinstance(item, dict) or not isinstance(item.get("key_id"), str):
        return None
    return Revocation(item["key_id"], str(item.get("revoked_at", "")), str(item.get("reason", "")))


def _sorted(keys: list[TrustedKey]) -> list[TrustedKey]:
    return sorted(keys, key=lambda k: (k.publisher or "", k.plan or "", k.key_id))


def _check_publisher(publisher: str) -> None:
    if not PUBLISHER.match(publisher):
        raise FlightPlanError(
            "keyring.invalid_publisher",
            f"'{publisher}' is not github://owner or github://owner/repo",
        )


def _check_plan(plan: str) -> None:
    if not SKILL_NAME.match(plan):
        raise FlightPlanError(
            "keyring.invalid_plan",
            f"'{plan}' is not a plan name",
            hint="lowercase letters, digits and single hyphens, as in the plan's frontmatter",
        )


_LEGACY_KEYS = {
    "keyId": "key_id",
    "publicKey": "public_key",
    "addedAt": "added_at",
    "revokedAt": "revoked_at",
}


def _snake_entry(item: dict[str, Any]) -> dict[str, Any]:
    """An entry with its pre-snake_case names (keyId, ...) read as the new ones."""
    out = dict(item)
    for old, new in _LEGACY_KEYS.items():
        if old in out and new not in out:
            out[new] = out.pop(old)
    return out


def unrevoked_signing_key(
    signing_key: Ed25519PrivateKey | str | Path | None,
    passphrase: Passphrase,
    ring: Keyring,
    *,
    code: str,
    hint: str,
) -> tuple[Ed25519PrivateKey, str]:
    """The private key (loaded unless given loaded) and its key id; `code`
    when the keyring has revoked it (freeze and sign refuse the same way)."""
    key = (
        signing_key
        if isinstance(signing_key, Ed25519PrivateKey)
        else load_private_key(signing_key, passphrase)
    )
    signer = key_id(key.public_key())
    if signer in ring.revoked():
        message = f"the signing key {signer} is revoked in the keyring"
        raise FlightPlanError(code, message, hint=hint)
    return key, signer
