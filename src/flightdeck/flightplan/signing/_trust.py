"""The client-side trust state: what this machine has verified before.

Stored as `<data_dir>/trust.json` beside the keyring, read and replaced under
`<data_dir>/trust.json.lock`. Per plan name it remembers the publisher (or,
for a plan without one, the signer's key id) pinned at first trust, and the
highest semver label verified with its content hash. The store can be
rewritten by anyone who can write the data dir's `skills/`; this file is
what makes removing the newest version or serving an older one visible.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.config import ConfigError, StoreError, data_dir, store_url
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import SEMVER, signing_time
from flightdeck.flightplan._limits import STATE_FILE_BYTES

if TYPE_CHECKING:
    from flightdeck.flightplan.signing._trust_pg import PostgresTrustRows


@dataclass(frozen=True)
class TrustRecord:
    name: str
    owner: str  # the publisher, or "key:<key id>" for a plan without one
    version: str | None  # the highest semver label verified
    content_hash: str
    pinned_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "version": self.version,
            "content_hash": self.content_hash,
            "pinned_at": self.pinned_at,
        }


@dataclass(frozen=True)
class TrustDecision:
    """What a check did: `first` is true when the owner was pinned just now."""

    record: TrustRecord
    first: bool


def owner_of(publisher: str | None, signer: str) -> str:
    return publisher if publisher is not None else f"key:{signer}"


class TrustState:
    """`trust.json` in the data folder, or (default, when one is configured)
    the PostgreSQL store's `trust_state` table (`_trust_pg`); an explicit
    `path` is always the file."""

    def __init__(self, path: Path | None = None, *, url: str | None = None) -> None:
        self.path = path if path is not None else data_dir() / "trust.json"
        self._url, self._resolved = url, url is not None or path is not None
        self._rows: PostgresTrustRows | None = None

    def _store(self) -> PostgresTrustRows | None:
        """The store's rows, or None for the file (the URL resolved on first use)."""
        if not self._resolved:
            try:
                self._url = store_url()
            except StoreError as exc:
                raise FlightPlanError(exc.code, exc.message, hint=exc.hint) from None
            except ConfigError as exc:
                raise FlightPlanError(exc.code, f"{exc.path}: {exc.message}") from None
            self._resolved = True
        if self._url is not None and self._rows is None:
            from flightdeck.flightplan.signing._trust_pg import PostgresTrustRows

            self._rows = PostgresTrustRows(self._url)
        return self._rows

    def snapshot(self, path: Path) -> TrustState:
        """A file copy of this state at `path` (a dry run verifies against one)."""
        copy = TrustState(path)
        records = self._read()
        with copy._lock():
            copy._write(records)
        return copy

    def get(self, name: str) -> TrustRecord | None:
        return self._read().get(name)

    def records(self) -> list[TrustRecord]:
        return sorted(self._read().values(), key=lambda r: r.name)

    def check_and_record(
        self,
        name: str,
        owner: str,
        version: str | None,
        content_hash: str,
        *,
        explicit_version: bool,
        allow_rollback: bool = False,
        repin: bool = False,
        rivals: Callable[[], Collection[str]] = tuple,
    ) -> TrustDecision:
        """Refuse a changed owner or a rollback; else remember what was verified.

        On a first trust, `rivals()` names the other publishers the store holds
        this name under: with any, nobody can tell which one is the name's
        own, so nothing is pinned (`verify.publisher_conflict`) unless `repin`
        says the user decided."""
        with self._lock():
            records = self._read()
            known = records.get(name)
            if known is None and not repin:
                others = sorted(rivals())
                if others:
                    raise FlightPlanError(
                        "verify.publisher_conflict",
                        f"{name} has never been verified here, and the store holds it under"
                        f" {', '.join(others)} besides this version's {owner}: nothing is"
                        " trusted",
                        hint="ask the plan's publisher which is theirs; then run 'flightdeck"
                        f" verify {name}@VERSION --repin' on one of their versions (or remove"
                        " the other versions from the store: flightdeck skills list)",
                    )
            if known is None or repin:
                record = TrustRecord(name, owner, version, content_hash, signing_time())
                records[name] = record
                self._write(records)
                return TrustDecision(record, True)
            if known.owner != owner:
                raise FlightPlanError(
                    "verify.publisher_changed",
                    f"{name} was first trusted from {known.owner}, now it comes from {owner}",
                    hint="if the change is expected, re-pin with 'flightdeck verify "
                    f"{name} --repin' after checking with the publisher",
                )
            rolled = _older(version, known.version) or (
                version is not None
                and version == known.version
                and content_hash != known.content_hash
            )
            if rolled and not (explicit_version and allow_rollback):
                raise FlightPlanError(
                    "verify.rollback",
                    f"{name}@{version or content_hash} is not the newest verified version "
                    f"({known.version} {known.content_hash})",
                    hint=f"the newer version may have been removed; to use this one anyway: "
                    f"flightdeck verify {name}@{version} --allow-rollback (or launch"
                    f" {name}@{version} --allow-rollback)",
                )
            if _older(known.version, version) or known.version is None:
                record = TrustRecord(name, owner, version, content_hash, known.pinned_at)
                if record != known:
                    records[name] = record
                    self._write(records)
                return TrustDecision(record, False)
            return TrustDecision(known, False)

    def move_owner(self, name: str, old: str, new: str) -> bool:
        """Re-pin `name` from owner `old` to `new`, keeping its high-water mark;
        False (no change) when `name` is not pinned to `old`. The caller has
        proof of continuity (a version signed by both keys)."""
        with self._lock():
            records = self._read()
            known = records.get(name)
            if known is None or known.owner != old:
                return False
            records[name] = TrustRecord(
                name, new, known.version, known.content_hash, known.pinned_at
            )
            self._write(records)
            return True

    def _lock(self) -> AbstractContextManager[Any]:
        rows = self._store()
        if rows is not None:
            return rows.locked()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FlightPlanError(
                "trust.unwritable", f"cannot write {self.path}: {exc.strerror or exc}"
            ) from None
        return FileLock(str(self.path) + ".lock")

    def _read(self) -> dict[str, TrustRecord]:
        rows = self._store()
        if rows is not None:
            return {row[0]: TrustRecord(*row) for row in rows.read()}
        try:
            raw = read_json(read_regular(self.path, STATE_FILE_BYTES).decode("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:  # not JSON, not UTF-8, nested too deep
            raise FlightPlanError(
                "trust.unreadable",
                f"cannot read the trust state {self.path}: {exc}",
                hint="a damaged trust state is not treated as empty (that would forget "
                "every pin); fix or remove the file knowingly",
            ) from None
        plans: Any = raw.get("plans") if isinstance(raw, dict) else None
        if not isinstance(plans, dict):
            raise FlightPlanError(
                "trust.unreadable",
                f'cannot read the trust state {self.path}: expected {{"plans": {{...}}}}',
            )
        out = {}
        for name, item in plans.items():
            if isinstance(item, dict) and isinstance(item.get("owner"), str):
                out[name] = TrustRecord(
                    name,
                    item["owner"],
                    item.get("version") if isinstance(item.get("version"), str) else None,
                    # trust.json written before the snake_case change: camelCase.
                    str(item.get("content_hash", item.get("contentHash", ""))),
                    str(item.get("pinned_at", item.get("pinnedAt", ""))),
                )
        return out

    def _write(self, records: dict[str, TrustRecord]) -> None:
        rows = self._store()
        if rows is not None:
            rows.write(
                [
                    (r.name, r.owner, r.version, r.content_hash, r.pinned_at)
                    for r in records.values()
                ]
            )
            return
        body = {"version": 1, "plans": {n: r.to_dict() for n, r in sorted(records.items())}}
        try:
            fd, temp = tempfile.mkstemp(prefix=".trust-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(body, handle, indent=2)
                handle.write("\n")
            os.replace(temp, self.path)
        except OSError as exc:
            raise FlightPlanError(
                "trust.unwritable", f"cannot write {self.path}: {exc.strerror or exc}"
            ) from None


def _older(version: str | None, than: str | None) -> bool:
    if version is None or than is None or not SEMVER.match(version) or not SEMVER.match(than):
        return False
    return semver_key(version) < semver_key(than)


def semver_key(version: str) -> tuple[int, int, int, int, str]:
    core, _, pre = version.split("+", 1)[0].partition("-")
    major, minor, patch = (int(part) for part in core.split("."))
    # A release sorts after its pre-releases.
    return (major, minor, patch, 0 if pre else 1, pre)
