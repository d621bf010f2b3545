"""The skill store: content-addressed, immutable, atomic.

    <data_dir>/skills/<name>/versions/<first 16 hex of the content hash>/
        SKILL.md          the frozen manifest (lock included)
        lock.json         the lock section alone, JCS + newline
        code-pins.json    the driver code pinned at freeze, JCS + newline, when
                          pinned; its digest is in the SKILL.md's `metadata`
        SKILL.md.sig      the detached signature envelope (JSON)
        signer.pub.pem    the signer's Ed25519 public key
        SKILL.md.<hex>.sig  co-signatures by other keys (see _cosign), the only
                          files ever added to a stored version
        meta.json         an unsigned index (name, version, hash, publisher, key id,
                          signing time) copied from the signed statement; never
                          read for a decision. `workspace`, when freeze pinned
                          driver code, is where launch looks for the drivers by
                          default (the signed code digests decide)

A version directory is written whole into a temporary sibling and renamed
into place, so readers see all of it or none of it. Re-storing identical
files is a no-op; anything different under an existing directory, or a
semver label already used by other content, is refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.config import data_dir
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import SEMVER, SKILL_NAME, FrozenPlan
from flightdeck.flightplan._limits import STORE_FILE_BYTES
from flightdeck.flightplan.store._pinfile import CODE_PINS_FILE

SKILL_FILE = "SKILL.md"
LOCK_FILE = "lock.json"
SIGNATURE_FILE = "SKILL.md.sig"
PUBLIC_KEY_FILE = "signer.pub.pem"
META_FILE = "meta.json"
_HASH_PREFIX = re.compile(r"^[0-9a-f]{1,64}$")
_SEALED = (SKILL_FILE, LOCK_FILE, SIGNATURE_FILE, PUBLIC_KEY_FILE)


@dataclass(frozen=True)
class StoredVersion:
    name: str
    short_hash: str
    path: Path
    content_hash: str
    version: str | None
    publisher: str | None
    key_id: str | None
    frozen_at: str | None
    # Its signed statement could not be read (or it is not a directory), so
    # its label is unknown: it might be the newest version.
    damaged: bool = False

    @property
    def skill_path(self) -> Path:
        return self.path / SKILL_FILE

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "id": self.short_hash,
            "version": self.version,
            "content_hash": self.content_hash,
            "publisher": self.publisher,
            "key_id": self.key_id,
            "frozen_at": self.frozen_at,
            "path": str(self.path),
            "damaged": self.damaged,
        }


def _frozen_at() -> str:
    # SOURCE_DATE_EPOCH makes even the store metadata reproducible.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch) if epoch else time.time(), UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class SkillStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else data_dir() / "skills"

    def put(
        self, frozen: FrozenPlan, *, workspace: Path | None = None
    ) -> tuple[StoredVersion, bool]:
        """Store a frozen plan; returns (entry, created). Idempotent.
        `workspace`: where its pinned drivers were found (a launch default)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # One writer at a time: the version-label check and the rename
            # must not interleave with another freeze of the same label.
            with FileLock(str(self.root / ".store.lock")):
                return self._put(frozen, workspace)
        except OSError as exc:  # the data dir is a file, a full disk, no permission
            raise FlightPlanError(
                "store.unwritable",
                f"cannot write the skill store {self.root}: {exc.strerror or exc}",
                hint="check FLIGHTDECK_HOME (or the user data directory)",
            ) from None

    def _put(self, frozen: FrozenPlan, workspace: Path | None) -> tuple[StoredVersion, bool]:
        files = {
            SKILL_FILE: frozen.skill_text.encode("utf-8"),
            LOCK_FILE: frozen.lock_bytes(),
            SIGNATURE_FILE: frozen.signature.to_bytes(),
            PUBLIC_KEY_FILE: frozen.public_key_pem,
        }
        pins = frozen.code_pins_bytes()
        if pins is not None:
            files[CODE_PINS_FILE] = pins
        statement = frozen.signature.statement or {}
        return self._write(
            _Identity(frozen.name, frozen.content_hash, frozen.version, frozen.publisher),
            files,
            frozen.signature.key_id,
            statement.get("signedAt"),
            {},
            workspace,
        )

    def put_verified(
        self,
        identity: tuple[str, str, str | None, str | None],
        files: dict[str, bytes],
        key_id: str,
        signed_at: str | None,
        beside: dict[str, bytes],
    ) -> tuple[StoredVersion, bool]:
        """Store the files of a version verified elsewhere (install):
        `identity` is (name, content hash, label, publisher) as verify read
        them; `beside` files (`origin.json`) are written in the same rename
        but never compared, so a second install of the version is a no-op."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.root / ".store.lock")):
                return self._write(_Identity(*identity), files, key_id, signed_at, beside)
        except OSError as exc:
            raise FlightPlanError(
                "store.unwritable",
                f"cannot write the skill store {self.root}: {exc.strerror or exc}",
                hint="check FLIGHTDECK_HOME (or the user data directory)",
            ) from None

    def _write(
        self,
        plan: _Identity,
        files: dict[str, bytes],
        key_id: str,
        signed_at: str | None,
        beside: dict[str, bytes],
        workspace: Path | None = None,
    ) -> tuple[StoredVersion, bool]:
        versions = self.root / plan.name / "versions"
        target = versions / plan.short_hash
        if target.exists():
            return self._existing(target, files), False
        stored = self.versions_of(plan.name)
        _check_label(plan, stored)
        _check_publisher(plan, stored)
        versions.mkdir(parents=True, exist_ok=True)
        # meta.json is an unsigned index, rebuilt from the signed statement;
        # nothing reads it for a decision (see _entry).
        meta = {
            "name": plan.name,
            "version": plan.version,
            "content_hash": plan.content_hash,
            "publisher": plan.publisher,
            "key_id": key_id,
            "frozen_at": signed_at or _frozen_at(),
        }
        if workspace is not None:
            # Only where launch looks for the pinned drivers by default: the
            # code digests in the signed lock decide whether they may run.
            meta["workspace"] = str(workspace.resolve())
        staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=versions))
        try:
            for name, raw in {**files, **beside, META_FILE: _json(meta)}.items():
                # `beside` names may hold folders (an installed version's
                # driver files under workspace/, checked by install).
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                (staging / name).write_bytes(raw)
            os.rename(staging, target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if target.exists():  # another process stored it first
                return self._existing(target, files), False
            raise
        return self._entry(target), True

    def add_cosignature(self, folder: Path, name: str, raw: bytes) -> bool:
        """Add the co-signature file `name` to a stored version; True when
        written, False when the identical file is already there."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.root / ".store.lock")):
                path = folder / name
                if path.is_file() and path.read_bytes() == raw:
                    return False
                if path.exists() or path.is_symlink():
                    raise FlightPlanError(
                        "store.version_conflict",
                        f"{path} already holds a different co-signature",
                        hint="co-signatures are deterministic: this file was changed; "
                        "remove it and sign again",
                        where=str(path),
                    )
                # Written whole then renamed: a reader never sees half a file.
                temp = folder / f".tmp-{os.getpid()}-{name}"
                temp.write_bytes(raw)
                os.replace(temp, path)
                return True
        except OSError as exc:
            raise FlightPlanError(
                "store.unwritable",
                f"cannot write {folder / name}: {exc.strerror or exc}",
            ) from None

    def versions_of(self, name: str) -> list[StoredVersion]:
        """The stored versions of `name` (damaged ones included), unverified."""
        versions = self.root / name / "versions"
        if not SKILL_NAME.match(name) or not versions.is_dir():
            return []
        return [self._entry(path) for path in sorted(versions.iterdir()) if path.name[0] != "."]

    def list(self) -> list[StoredVersion]:
        if not self.root.is_dir():
            return []
        out = []
        for versions in sorted(self.root.glob("*/versions")):
            if not versions.is_dir():  # a stray file is no stored version
                continue
            for path in sorted(versions.iterdir()):
                # Not only directories: a file or a dangling symbolic link
                # where a version should be is a damaged entry, not nothing.
                if not path.name.startswith("."):
                    out.append(self._entry(path))
        return sorted(out, key=lambda e: (e.name, e.frozen_at or "", e.short_hash))

    def find(self, name: str, version: str | None = None) -> StoredVersion:
        """By semver label, by hash prefix (`sha256:` optional), or the latest:
        the highest semver label, else the most recently frozen."""
        if not SKILL_NAME.match(name):
            raise FlightPlanError("store.invalid_name", f"'{name}' is not a skill name")
        if version is not None and not (
            SEMVER.match(version) or _HASH_PREFIX.match(version.removeprefix("sha256:"))
        ):
            raise FlightPlanError(
                "store.invalid_version",
                f"'{name}@{version}': '{version}' is neither a semver label nor a hash prefix",
                hint="NAME@1.0.0 or NAME@<content hash prefix>; see flightdeck skills list",
            )
        entries = [entry for entry in self.list() if entry.name == name]
        if not entries:
            raise FlightPlanError(
                "store.not_found", f"no frozen skill named '{name}'", hint="flightdeck skills list"
            )
        if version is None:
            damaged = [e for e in entries if e.damaged]
            if damaged:
                # Skipping it could serve an older version in place of a
                # newer one whose index was destroyed: verify reports the
                # damage on this entry instead.
                return damaged[0]
            labelled = [e for e in entries if e.version and SEMVER.match(e.version)]
            if labelled:
                return max(labelled, key=lambda e: _semver_key(e.version or ""))
            return entries[-1]
        prefix = version.removeprefix("sha256:")
        matches = [e for e in entries if e.version == version]
        matches = matches or [e for e in entries if e.content_hash[7:].startswith(prefix)]
        if len(matches) != 1:
            problem = "matches several versions" if matches else "matches no version"
            raise FlightPlanError(
                "store.ambiguous_version" if matches else "store.not_found",
                f"'{name}@{version}' {problem}",
                hint="flightdeck skills list",
            )
        return matches[0]

    def _existing(self, target: Path, files: dict[str, bytes]) -> StoredVersion:
        for name, raw in files.items():
            path = target / name
            if name == SIGNATURE_FILE and path.is_file() and _same_signing(path.read_bytes(), raw):
                continue
            if not path.is_file() or path.read_bytes() != raw:
                raise FlightPlanError(
                    "store.version_conflict",
                    f"{target} already holds a different {name}",
                    hint="a stored version is immutable; to add a signature by another key "
                    "run 'flightdeck sign NAME@VERSION --signing-key KEY'",
                )
        return self._entry(target)

    def _entry(self, path: Path) -> StoredVersion:
        # The index comes from the statement in SKILL.md.sig, never from
        # meta.json: relabelling a version there must change nothing. It is
        # read unverified here; verify checks the statement's signature and
        # that it describes the plan before anything is trusted.
        meta: dict[str, Any] = {}
        try:
            raw = read_regular(path / SIGNATURE_FILE, STORE_FILE_BYTES)
            loaded = read_json(raw.decode("utf-8"))
            statement = loaded.get("statement") if isinstance(loaded, dict) else None
            if isinstance(statement, dict):
                meta = {**statement, "frozenAt": statement.get("signedAt")}
                meta["keyId"] = loaded.get("keyId")
        except (OSError, ValueError):  # unreadable, not JSON, nested too deep
            pass
        name = path.parent.parent.name
        return StoredVersion(
            name=name,
            short_hash=path.name,
            path=path,
            content_hash=str(meta.get("contentHash") or f"sha256:{path.name}"),
            version=_opt(meta.get("version")),
            publisher=_opt(meta.get("publisher")),
            key_id=_opt(meta.get("keyId")),
            frozen_at=_opt(meta.get("frozenAt")),
            damaged=not meta,
        )


@dataclass(frozen=True)
class _Identity:
    name: str
    content_hash: str
    version: str | None
    publisher: str | None

    @property
    def short_hash(self) -> str:
        return self.content_hash.split(":", 1)[1][:16]


def _check_label(frozen: _Identity, stored: list[StoredVersion]) -> None:
    if frozen.version is None:
        return
    for entry in stored:
        if entry.version == frozen.version:
            raise FlightPlanError(
                "store.version_conflict",
                f"{frozen.name}@{frozen.version} is already frozen with other content "
                f"({entry.content_hash})",
                hint="frozen versions are immutable: choose a new --version",
            )


def publisher_label(publisher: str | None) -> str:
    return publisher if publisher is not None else "(no publisher)"


def _check_publisher(frozen: _Identity, stored: list[StoredVersion]) -> None:
    """One publisher per name: a second would make the name's first trust on
    another machine a matter of which version it verifies first."""
    for entry in stored:
        if not entry.damaged and entry.publisher != frozen.publisher:
            raise FlightPlanError(
                "store.publisher_conflict",
                f"{frozen.name} is already stored under {publisher_label(entry.publisher)}"
                f" ({entry.version or entry.content_hash}); this version is published as"
                f" {publisher_label(frozen.publisher)}",
                hint="a name has one publisher in a store: freeze it under another plan name,"
                + (
                    " or without --publisher as the stored versions were"
                    if entry.publisher is None
                    else f" or with --publisher {entry.publisher} as the stored versions were"
                ),
            )


def _opt(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _semver_key(version: str) -> tuple[int, int, int, int, str]:
    core, _, pre = version.split("+", 1)[0].partition("-")
    major, minor, patch = (int(part) for part in core.split("."))
    # A release sorts after its pre-releases.
    return (major, minor, patch, 0 if pre else 1, pre)


def _same_signing(stored: bytes, fresh: bytes) -> bool:
    """The same content signed again by the same key, only at another time.

    The statement carries its signing time, so a re-freeze of identical
    content produces new signature bytes; that is still the stored version
    (the first signature stays), while another key or any other field is not.
    """
    try:
        old, new = read_json(stored), read_json(fresh)
    except ValueError:
        return False
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return False
    drop = {"statementSignature", "statement"}
    old_statement, new_statement = old.get("statement"), new.get("statement")
    if not (isinstance(old_statement, dict) and isinstance(new_statement, dict)):
        return False
    return {k: v for k, v in old.items() if k not in drop} == {
        k: v for k, v in new.items() if k not in drop
    } and {k: v for k, v in old_statement.items() if k != "signedAt"} == {
        k: v for k, v in new_statement.items() if k != "signedAt"
    }
