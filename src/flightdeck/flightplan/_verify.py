"""Verify a frozen plan before anything runs.

Order: read → frozen? → signature file → public key matches the signer →
recompute the canonical bytes and hash → Ed25519 signature → the stored lock
file agrees → the code pins file matches its signed digest → co-signatures →
one unrevoked signer trusted for the publisher (or pinned for the name) in
the keyring → schema and lint.
Each refusal is a `FlightPlanError` with its own `verify.*` code, so a
tampered body, frontmatter, lock, key or signature are told apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.documents import Document
from flightdeck.flightplan._canonical import (
    CanonicalError,
    PartDigests,
    canonical_bytes,
    jcs,
    sha256_tag,
)
from flightdeck.flightplan._environment import composed_problems
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._limits import PLAN_FILE_BYTES, STORE_FILE_BYTES
from flightdeck.flightplan._parsed import parse_skill
from flightdeck.flightplan.model._lock import Lock
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.signing._cosign import read_cosigners
from flightdeck.flightplan.signing._keyring import Keyring
from flightdeck.flightplan.signing._signers import accept_signer, carry_pin, pinned_key
from flightdeck.flightplan.signing._signing import key_id, load_public_key, signature_valid
from flightdeck.flightplan.signing._statement import check_statement
from flightdeck.flightplan.signing._trust import TrustState, owner_of
from flightdeck.flightplan.store._pinfile import read_pins_file
from flightdeck.flightplan.store._store import (
    LOCK_FILE,
    PUBLIC_KEY_FILE,
    SIGNATURE_FILE,
    SKILL_FILE,
    SkillStore,
    publisher_label,
)


@dataclass(frozen=True)
class VerifiedPlan:
    """A plan whose bytes, signature and publisher checked out."""

    plan: FlightPlan
    document: Document
    lock: Lock
    name: str
    content_hash: str
    version: str | None
    publisher: str | None
    signer_key_id: str
    path: Path  # the frozen SKILL.md
    signed_at: str = ""
    first_trust: bool = False  # the name was pinned to its publisher just now

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "name": self.name,
            "content_hash": self.content_hash,
            "version": self.version,
            "publisher": self.publisher,
            "signer_key_id": self.signer_key_id,
            "signed_at": self.signed_at,
            "first_trust": self.first_trust,
            "path": str(self.path),
        }


def locate_plan(target: str | Path, store: SkillStore | None = None) -> Path:
    """The frozen SKILL.md for `NAME[@VERSION]`, a version directory or a file."""
    return _locate(target, store)[0]


def _locate(
    target: str | Path, store: SkillStore | None
) -> tuple[Path, tuple[str, str | None] | None]:
    """The SKILL.md path, and (name, version) when it came from the store."""
    if not str(target).strip():  # Path("") is ".", which would read ./SKILL.md
        raise FlightPlanError(
            "verify.no_target", "no plan named", hint="give NAME, NAME@VERSION or a SKILL.md path"
        )
    path = Path(target)
    if path.is_symlink() and not path.exists():
        raise FlightPlanError("verify.not_found", f"{target} is a broken symbolic link")
    if path.is_dir():
        return path / SKILL_FILE, None
    if path.is_file():
        return path, None
    text = str(target)
    name, at, version = text.partition("@")
    if "/" in text or text.endswith(".md"):
        raise FlightPlanError("verify.not_found", f"no such file or directory: {text}")
    if at and not version:
        raise FlightPlanError(
            "store.invalid_version",
            f"'{text}' names no version after '@'",
            hint="NAME@1.0.0 (a semver label) or NAME@<content hash prefix>",
        )
    entry = (store or SkillStore()).find(name, version or None)
    return entry.skill_path, (name, version or None)


def verify_plan(
    target: str | Path,
    *,
    store: SkillStore | None = None,
    keyring: Keyring | None = None,
    trust: TrustState | None = None,
    key: bytes | None = None,
    allow_rollback: bool = False,
    repin: bool = False,
) -> VerifiedPlan:
    """Verify `NAME[@VERSION]` from the store, or a frozen SKILL.md path whose
    `SKILL.md.sig`, `lock.json` and `signer.pub.pem` sit beside it.

    `key` (a PEM public key the user supplied) must be the signer's key.
    The trust state refuses a changed publisher and a rollback unless
    `repin`, or `allow_rollback` with an explicitly named version."""
    skill, requested = _locate(target, store)
    folder = skill.parent
    # Parse, schema and lint come from memory for bytes seen before in this
    # process (`_parsed.py`); every check below runs on every call.
    parsed = parse_skill(skill)
    result = parsed.result
    document = result.document
    if document is None or parsed.plan is None:
        detail = "; ".join(d.message for d in result.diagnostics)
        raise FlightPlanError("verify.unreadable", f"cannot parse {skill}: {detail}")
    aileron = document.data.get("aileron")
    lock = Lock.read(aileron.get("lock")) if isinstance(aileron, dict) else None
    if lock is None or lock.content_hash is None:
        raise FlightPlanError(
            "verify.not_frozen", f"{skill} has no lock.contentHash", hint="freeze it first"
        )
    envelope = _read_signature(folder / SIGNATURE_FILE)
    public = _read_public_key(folder / PUBLIC_KEY_FILE, envelope)
    try:
        message = canonical_bytes(document.data, document.body)
    except CanonicalError as exc:
        # Freeze never writes a value JCS cannot encode (an integer beyond
        # 2**53, a lone surrogate): the frontmatter was edited afterwards.
        raise FlightPlanError(
            "verify.frontmatter_tampered", f"{skill}: {exc}", where=str(skill)
        ) from None
    recomputed = sha256_tag(message)
    if recomputed != lock.content_hash:
        raise _which_part_changed(document, envelope, skill)
    if recomputed != envelope.get("contentHash") or not signature_valid(
        public, message, str(envelope.get("signature", ""))
    ):
        # The content agrees with its own lock, so the signature is what is
        # wrong (made by another key, or taken from another plan or version).
        raise _bad_signature(folder)
    lock_json = _check_lock_file(folder / LOCK_FILE, document)
    # The pins file is bound by the (now verified) frontmatter; older plans
    # hold their pins in the lock itself.
    lock = replace(lock, code_pins=read_pins_file(folder, document.data, lock.code_pins))
    plan = replace(parsed.plan, lock=lock)
    check_statement(envelope, public, plan.name, lock, recomputed, lock_json, folder)
    signers = [key_id(public), *read_cosigners(folder, message, envelope["statement"], recomputed)]
    state = trust or TrustState()
    pinned = pinned_key(state, plan.name or "")
    signer = accept_signer(
        signers,
        publisher=lock.publisher,
        plan=plan.name or "",
        key=key,
        keyring=keyring or Keyring(),
        pinned=pinned,
    )
    if requested is not None:
        _check_store_entry(requested, plan, lock, recomputed, folder)
    # A composed plan's tools are judged against the Features its lock pins.
    judged = composed_problems(plan, [*result.diagnostics, *parsed.lint])
    problems = [d for d in judged if d.is_error]
    if problems:
        raise FlightPlanError(
            "verify.invalid_plan",
            f"the signed plan no longer validates: {problems[0].message}",
            diagnostics=tuple(problems),
        )
    carry_pin(
        state,
        plan.name or "",
        publisher=lock.publisher,
        pinned=pinned,
        signers=signers,
        accepted=signer,
    )
    decision = state.check_and_record(
        plan.name or "",
        owner_of(lock.publisher, signer),
        lock.version,
        recomputed,
        explicit_version=requested is not None and requested[1] is not None,
        allow_rollback=allow_rollback,
        repin=repin,
        rivals=lambda: _rivals(store or SkillStore(), plan.name or "", lock.publisher),
    )
    return VerifiedPlan(
        first_trust=decision.first,
        signed_at=str(envelope["statement"].get("signedAt")),
        plan=plan,
        document=document,
        lock=lock,
        name=plan.name or "",
        content_hash=recomputed,
        version=lock.version,
        publisher=lock.publisher,
        signer_key_id=signer,
        path=skill,
    )


def _rivals(store: SkillStore, name: str, publisher: str | None) -> set[str]:
    """The other publishers the store holds `name` under, as their statements
    say (unverified: a forged one can only make verify refuse, never accept)."""
    return {
        publisher_label(entry.publisher)
        for entry in store.versions_of(name)
        if not entry.damaged and entry.publisher != publisher
    }


def _read_signature(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FlightPlanError(
            "verify.signature_missing",
            f"no detached signature at {path}",
            hint="a frozen plan is verified only with its SKILL.md.sig",
        )
    try:
        envelope = read_json(read_regular(path, STORE_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError) as exc:  # not JSON, not UTF-8, nested too deep
        raise FlightPlanError("verify.signature_malformed", f"{path}: {exc}") from None
    if not isinstance(envelope, dict) or envelope.get("algorithm") != "ed25519":
        raise FlightPlanError("verify.signature_malformed", f"{path} is not an ed25519 envelope")
    return envelope


def _read_public_key(path: Path, envelope: dict[str, Any]) -> Ed25519PublicKey:
    if not path.is_file():
        raise FlightPlanError("verify.public_key_missing", f"no signer public key at {path}")
    try:
        pem = read_regular(path, STORE_FILE_BYTES)
    except OSError as exc:
        raise FlightPlanError("verify.public_key_invalid", f"{path}: {exc}") from None
    public = load_public_key(pem, code="verify.public_key_invalid")
    if key_id(public) != envelope.get("keyId"):
        raise FlightPlanError(
            "verify.public_key_mismatch",
            f"the public key {key_id(public)} is not the key that signed ({envelope.get('keyId')})",
            hint="the signer's public key file was swapped",
            where=str(path),
        )
    return public


def _which_part_changed(
    document: Document, envelope: dict[str, Any], skill: Path
) -> FlightPlanError:
    now = PartDigests.of(document.data, document.body).to_data()
    raw_parts = envelope.get("parts")
    signed: dict[str, Any] = raw_parts if isinstance(raw_parts, dict) else {}
    for part, code in (
        ("body", "verify.body_tampered"),
        ("frontmatter", "verify.frontmatter_tampered"),
        ("lock", "verify.lock_tampered"),
    ):
        if signed.get(part) != now[part]:
            return FlightPlanError(
                code,
                f"the {part} of {skill} changed after it was signed",
                hint="the content hash no longer matches; re-freeze from the source",
                where=str(skill),
            )
    return FlightPlanError(
        "verify.lock_tampered",
        f"lock.contentHash of {skill} does not match its content",
        where=str(skill),
    )


def _bad_signature(folder: Path) -> FlightPlanError:
    return FlightPlanError(
        "verify.signature_invalid",
        "the signature does not verify over this plan with the signer's public key",
        hint="the signature was made by another key, or for another plan or version",
        where=str(folder / SIGNATURE_FILE),
    )


def _check_lock_file(path: Path, document: Document) -> bytes:
    """The bytes of lock.json; its absence is tampering, not an old format."""
    if path.is_symlink() or not path.is_file():
        raise FlightPlanError(
            "verify.lock_missing",
            f"no lock.json at {path}",
            hint="every frozen version has one; a missing lock means the store was "
            "changed: re-freeze from the source",
            where=str(path),
        )
    try:
        raw = read_regular(path, PLAN_FILE_BYTES)
        stored = read_json(raw.decode("utf-8"))
        exact = jcs(stored) + b"\n" == raw  # CanonicalError is a ValueError
    except (OSError, ValueError, RecursionError):
        stored, exact = None, False
    if stored is None or not exact or stored != document.data["aileron"]["lock"]:
        raise FlightPlanError(
            "verify.lock_tampered",
            f"{path} differs from the lock inside the frozen SKILL.md",
            where=str(path),
        )
    return raw


def _check_store_entry(
    requested: tuple[str, str | None], plan: FlightPlan, lock: Lock, digest: str, folder: Path
) -> None:
    # The store index (directory names, meta.json) is not signed: make sure
    # the signed content is what was asked for, so an edited index cannot
    # serve another (older, validly signed) version under a requested label.
    name, version = requested
    hex_digest = digest.removeprefix("sha256:")
    wrong = []
    if plan.name != name:
        wrong.append(f"name {plan.name!r} is not {name!r}")
    if folder.name != hex_digest[:16]:
        wrong.append(f"directory {folder.name} is not {hex_digest[:16]}")
    if (
        version
        and lock.version != version
        and not hex_digest.startswith(version.removeprefix("sha256:"))
    ):
        wrong.append(f"signed version {lock.version!r} is not {version!r}")
    if wrong:
        raise FlightPlanError(
            "verify.store_mismatch",
            "the store entry does not hold what was asked for: " + "; ".join(wrong),
            where=str(folder),
        )
