"""`sign`: co-sign a stored version with another key (key rotation).

Only a version that verifies now is co-signed: the new key vouches for what
the keyring already accepts, so co-signing cannot launder a version whose
signers are untrusted or revoked. See _cosign for the file it writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck._json import read_json
from flightdeck.flightplan._canonical import canonical_bytes
from flightdeck.flightplan._verify import verify_plan
from flightdeck.flightplan.signing._cosign import cosignature_name, make_cosignature
from flightdeck.flightplan.signing._keyring import Keyring, unrevoked_signing_key
from flightdeck.flightplan.signing._passphrase import Passphrase
from flightdeck.flightplan.signing._trust import TrustState
from flightdeck.flightplan.store._store import SIGNATURE_FILE, SkillStore


@dataclass(frozen=True)
class CoSignOutcome:
    name: str
    version: str | None
    content_hash: str
    key_id: str
    path: Path  # the co-signature file (SKILL.md.sig when the key signed first)
    created: bool  # False: this key had already signed the version

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "content_hash": self.content_hash,
            "key_id": self.key_id,
            "path": str(self.path),
            "created": self.created,
        }


def cosign_version(
    target: str | Path,
    *,
    signing_key: Ed25519PrivateKey | str | Path | None = None,
    passphrase: Passphrase = None,
    store: SkillStore | None = None,
    keyring: Keyring | None = None,
    trust: TrustState | None = None,
) -> CoSignOutcome:
    """Add a signature by `signing_key` to the stored `NAME@VERSION` (or a
    version directory), over the same canonical bytes and signed statement."""
    ring = keyring or Keyring()
    key, signer = unrevoked_signing_key(
        signing_key, passphrase, ring, code="sign.key_revoked", hint="co-sign with a current key"
    )
    store = store or SkillStore()
    # An explicit older version is what rotation co-signs: not a rollback.
    verified = verify_plan(target, store=store, keyring=ring, trust=trust, allow_rollback=True)
    folder = verified.path.parent
    envelope = read_json((folder / SIGNATURE_FILE).read_text("utf-8"))

    def outcome(path: Path, created: bool) -> CoSignOutcome:
        return CoSignOutcome(
            verified.name, verified.version, verified.content_hash, signer, path, created
        )

    if envelope.get("keyId") == signer:
        return outcome(folder / SIGNATURE_FILE, False)
    document = verified.document
    cosignature = make_cosignature(
        key,
        canonical_bytes(document.data, document.body),
        envelope["statement"],
        verified.content_hash,
    )
    name = cosignature_name(signer)
    created = store.add_cosignature(folder, name, cosignature.to_bytes())
    return outcome(folder / name, created)
