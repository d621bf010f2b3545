"""The whole freeze, from a file and a key to a stored, signed version."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck.flightplan._environment import ImageComposer
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import FrozenPlan, freeze_file
from flightdeck.flightplan._pins import CodeResolver
from flightdeck.flightplan.model._features import FeatureCatalog
from flightdeck.flightplan.registry._images import ImageResolver
from flightdeck.flightplan.signing._keyring import Keyring, unrevoked_signing_key
from flightdeck.flightplan.signing._passphrase import Passphrase
from flightdeck.flightplan.store._store import SkillStore, StoredVersion


@dataclass(frozen=True)
class FreezeOutcome:
    frozen: FrozenPlan
    stored: StoredVersion
    created: bool  # False: the identical version was already in the store
    key_pinned: bool = False  # the signing key was pinned for the plan name just now
    # Not errors: the version is stored. Each is {code, message, hint}.
    warnings: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.stored.to_dict(),
            "created": self.created,
            "key_pinned": self.key_pinned,
            "warnings": self.warnings,
        }


def freeze_plan(
    path: str | Path,
    *,
    signing_key: Ed25519PrivateKey | str | Path | None = None,
    publisher: str | None = None,
    version: str | None = None,
    resolver: ImageResolver | None = None,
    store: SkillStore | None = None,
    code: CodeResolver | None = None,
    passphrase: Passphrase = None,
    keyring: Keyring | None = None,
    tools: FeatureCatalog | None = None,
    composer: ImageComposer | None = None,
) -> FreezeOutcome:
    """Parse, lint, resolve, lock, hash, sign and store. `signing_key` may be a
    loaded key, a PEM path or PEM text; None reads `FLIGHTDECK_SIGNING_KEY`.
    `passphrase` opens an encrypted key (see `load_private_key`).
    With `code`, action refs' driver code is pinned and the resolver's
    workspace is remembered beside the version (meta.json, unsigned).

    A plan without a publisher is vouched for by a key pinned for its name;
    the user who signs it with their own private key pins that key here (never
    a key that came with an artifact), so verify and launch accept it.
    With a publisher, `keyring` (default: the user's) is only read, to warn
    when it does not trust the signing key for that publisher."""
    ring = keyring or Keyring()
    key, signer = unrevoked_signing_key(
        signing_key,
        passphrase,
        ring,
        code="freeze.key_revoked",
        hint="sign with a current key ('flightdeck keys generate')",
    )
    frozen = freeze_file(
        path,
        key,
        publisher=publisher,
        version=version,
        resolver=resolver,
        code=code,
        tools=tools,
        composer=composer,
    )
    workspace = code.workspace if code is not None else None
    stored, created = (store or SkillStore()).put(frozen, workspace=workspace)
    pinned = False
    if publisher is None and not any(k.key_id == signer for k in ring.pinned_for(frozen.name)):
        ring.trust_plan(frozen.name, frozen.public_key_pem)
        pinned = True
    warnings = _trust_warnings(frozen, stored, ring)
    return FreezeOutcome(frozen, stored, created, pinned, warnings)


def _trust_warnings(
    frozen: FrozenPlan, stored: StoredVersion, keyring: Keyring
) -> list[dict[str, str]]:
    """Freezing for a publisher whose keyring entry lacks this key succeeds,
    but verify and launch will refuse the plan: say so now, with the fix."""
    publisher = frozen.publisher
    if publisher is None:
        return []
    key = frozen.signature.key_id
    try:
        trusted = any(entry.key_id == key for entry in keyring.trusted_for(publisher))
    except FlightPlanError as exc:
        return [
            {"code": "freeze.publisher_untrusted", "message": exc.message, "hint": exc.hint or ""}
        ]
    if trusted:
        return []
    public = stored.path / "signer.pub.pem"
    return [
        {
            "code": "freeze.publisher_untrusted",
            "message": f"the signing key {key} is not trusted for {publisher} in the keyring;"
            " verify and launch will refuse this plan (verify.publisher_untrusted)",
            # The signer holds the private key, so the public key freeze just
            # stored is theirs; a consumer must get it from the publisher.
            "hint": f"if you publish as {publisher}: flightdeck keyring trust {publisher}"
            f" --key {public}",
        }
    ]
