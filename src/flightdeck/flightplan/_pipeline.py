"""The whole freeze, from a file and a key to a stored, signed version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck.flightplan._freeze import FrozenPlan, freeze_file
from flightdeck.flightplan._images import ImageResolver
from flightdeck.flightplan._pins import CodeResolver
from flightdeck.flightplan._signing import load_private_key
from flightdeck.flightplan._store import SkillStore, StoredVersion


@dataclass(frozen=True)
class FreezeOutcome:
    frozen: FrozenPlan
    stored: StoredVersion
    created: bool  # False: the identical version was already in the store

    def to_dict(self) -> dict[str, Any]:
        return {**self.stored.to_dict(), "created": self.created}


def freeze_plan(
    path: str | Path,
    *,
    signing_key: Ed25519PrivateKey | str | Path | None = None,
    publisher: str | None = None,
    version: str | None = None,
    resolver: ImageResolver | None = None,
    store: SkillStore | None = None,
    code: CodeResolver | None = None,
) -> FreezeOutcome:
    """Parse, lint, resolve, lock, hash, sign and store. `signing_key` may be a
    loaded key, a PEM path or PEM text; None reads `FLIGHTDECK_SIGNING_KEY`.
    With `code`, action refs' driver code is pinned and the resolver's
    workspace is remembered beside the version (meta.json, unsigned)."""
    key = (
        signing_key if isinstance(signing_key, Ed25519PrivateKey) else load_private_key(signing_key)
    )
    frozen = freeze_file(
        path, key, publisher=publisher, version=version, resolver=resolver, code=code
    )
    workspace = code.workspace if code is not None else None
    stored, created = (store or SkillStore()).put(frozen, workspace=workspace)
    return FreezeOutcome(frozen, stored, created)
