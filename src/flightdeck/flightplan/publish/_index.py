"""The signed versions index: rollback and freeze on a fresh machine.

The trust state stops a rollback only where the name was verified before.
So `publish --signing-key` also signs a small index of the name's
published versions (TUF's snapshot and timestamp ideas, scaled down):

    {"name", "publisher", "sequence", "expires", "versions":
        [{"id", "version", "digest"}...]}      (JCS; the newest last)

stored in the repository under the tag `index` as an artifact of type
`application/vnd.flightdeck.flightplan.index.v1+json` whose one layer is
`index.json` and whose second is its signature envelope `{"keyId",
"signature"}` (Ed25519 over the JCS bytes). Each publish of a new version
re-signs it with the sequence one higher and a fresh expiry.

`install` of `latest` (no tag, or `:latest`), when the repository has an
index, accepts the artifact only when: the index is signed by a key the
keyring trusts for the index's publisher (`install.index_untrusted`); it
has not expired (`install.index_expired`); its sequence is not lower than
one seen here for the name (`install.index_rollback`); and the artifact is
its newest version (`install.index_mismatch`: an older artifact served
under `latest`, or one the index does not list). The sequence seen is kept
in `<data_dir>/index-state.json`, written only after the install stored.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.flightplan._canonical import jcs
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.publish._artifact import (
    EMPTY_CONFIG,
    MANIFEST_TYPE,
    Descriptor,
    empty_config,
)
from flightdeck.flightplan.registry._images import ImageRef
from flightdeck.flightplan.registry._oci import OciClient, sha256
from flightdeck.flightplan.registry._registry_http import RegistryRefused
from flightdeck.flightplan.signing._keyring import Keyring
from flightdeck.flightplan.signing._signing import (
    key_id,
    load_public_key,
    sign,
    signature_valid,
)

INDEX_TAG = "index"
INDEX_TYPE = "application/vnd.flightdeck.flightplan.index.v1+json"
INDEX_FILE_TYPE = "application/vnd.flightdeck.flightplan.index-file.v1+json"
INDEX_SIG_TYPE = "application/vnd.flightdeck.flightplan.index-signature.v1+json"
INDEX_LIMIT = 1 << 20
DAY = 86400


@dataclass(frozen=True)
class VersionsIndex:
    name: str
    publisher: str | None
    sequence: int
    expires: int  # seconds since the epoch
    versions: tuple[dict[str, Any], ...]

    def to_bytes(self) -> bytes:
        return jcs(
            {
                "name": self.name,
                "publisher": self.publisher,
                "sequence": self.sequence,
                "expires": self.expires,
                "versions": list(self.versions),
            }
        )

    def newest(self) -> dict[str, Any] | None:
        return self.versions[-1] if self.versions else None


def signed(index: VersionsIndex, key: Ed25519PrivateKey) -> tuple[bytes, bytes]:
    body = index.to_bytes()
    envelope = jcs({"keyId": key_id(key.public_key()), "signature": sign(key, body)})
    return body, envelope


def next_index(
    old: VersionsIndex | None,
    name: str,
    publisher: str | None,
    entry: dict[str, Any],
    expires_days: int,
) -> VersionsIndex | None:
    """The index with `entry` added as the newest; None when it is already
    the newest entry of an index that has not expired (nothing to sign)."""
    now = int(time.time())
    if old is not None and old.newest() == entry and old.expires > now:
        return None
    kept = [v for v in (old.versions if old else ()) if v.get("id") != entry["id"]]
    sequence = old.sequence + 1 if old else 1
    return VersionsIndex(name, publisher, sequence, now + expires_days * DAY, (*kept, entry))


def read_index(body: bytes, envelope: bytes, where: str) -> tuple[VersionsIndex, dict[str, Any]]:
    """Parse an index and its envelope (unverified); `install.index_untrusted`
    when they are not well formed."""
    try:
        data = read_json(body)
        sig = read_json(envelope)
        index = VersionsIndex(
            str(data["name"]),
            data["publisher"] if isinstance(data.get("publisher"), str) else None,
            _int(data["sequence"]),
            _int(data["expires"]),
            tuple(_entry(v) for v in data["versions"]),
        )
        if not isinstance(sig, dict) or not all(
            isinstance(sig.get(k), str) for k in ("keyId", "signature")
        ):
            raise TypeError("the signature envelope is not {keyId, signature}")
    except (ValueError, KeyError, TypeError) as exc:
        raise FlightPlanError(
            "install.index_untrusted", f"{where}: the versions index is malformed ({exc})"
        ) from None
    return index, sig


def check_index(
    index: VersionsIndex,
    body: bytes,
    envelope: dict[str, Any],
    keyring: Keyring,
    seen: int | None,
    where: str,
) -> None:
    """Signed by a key trusted for its publisher, not expired, not older
    than the sequence seen here."""
    trusted = keyring.trusted_for(index.publisher) if index.publisher else []
    trusted += keyring.pinned_for(index.name)
    revoked = keyring.revoked()
    good = [
        k
        for k in trusted
        if k.key_id == envelope["keyId"]
        and k.key_id not in revoked
        and signature_valid(load_public_key(k.public_key_pem.encode()), body, envelope["signature"])
    ]
    if not good:
        raise FlightPlanError(
            "install.index_untrusted",
            f"{where}: the versions index of {index.name} is not signed by a key the keyring"
            f" trusts for {index.publisher or 'the plan name'}",
            hint="the index must be signed by the publisher's key (publish --signing-key)",
        )
    if index.expires <= int(time.time()):
        raise FlightPlanError(
            "install.index_expired",
            f"{where}: the versions index of {index.name} expired at {_iso(index.expires)}",
            hint="the registry may be withholding newer versions (a freeze attack); ask the"
            " publisher to publish again",
        )
    if seen is not None and index.sequence < seen:
        raise FlightPlanError(
            "install.index_rollback",
            f"{where}: the versions index of {index.name} is number {index.sequence}, older"
            f" than number {seen} seen here",
            hint="the registry serves an older index: a rollback",
        )


def check_newest(index: VersionsIndex, version_id: str, digest: str, where: str) -> None:
    newest = index.newest()
    if newest is None or newest.get("id") != version_id or newest.get("digest") != digest:
        listed = any(v.get("id") == version_id for v in index.versions)
        raise FlightPlanError(
            "install.index_mismatch",
            f"{where}: the artifact ({version_id}) is "
            + ("not the newest version" if listed else "not listed")
            + f" in the signed versions index of {index.name}"
            + (f" (newest: {newest.get('version') or newest.get('id')})" if newest else ""),
            hint="the registry serves an older artifact under latest, or one the publisher"
            " did not index",
        )


def push_index(client: OciClient, repo: ImageRef, body: bytes, envelope: bytes) -> str:
    """Upload the index and its signature and tag them `index`; the digest."""
    client.push_blob(repo, empty_config().digest, EMPTY_CONFIG)
    layers = []
    for media, title, raw in (
        (INDEX_FILE_TYPE, "index.json", body),
        (INDEX_SIG_TYPE, "index.sig", envelope),
    ):
        client.push_blob(repo, sha256(raw), raw)
        layers.append(Descriptor(media, sha256(raw), len(raw), title).to_data())
    config = {**empty_config().to_data(), "data": "e30="}
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": INDEX_TYPE,
        "config": config,
        "layers": layers,
    }
    raw_manifest = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    client.push_manifest(repo, INDEX_TAG, raw_manifest, MANIFEST_TYPE)
    return sha256(raw_manifest)


def fetch_index(client: OciClient, repo: ImageRef, where: str) -> tuple[bytes, bytes] | None:
    """The index bytes and its envelope from the tag `index`, each read at
    most `INDEX_LIMIT` and checked against its digest; None without one."""
    try:
        manifest = client.manifest(repo, INDEX_TAG, INDEX_LIMIT)
    except RegistryRefused as exc:
        if exc.code == "not_found":
            return None
        raise
    try:
        data = read_json(manifest.body)
        layers = {item["mediaType"]: item for item in data["layers"]}
        if data.get("artifactType") != INDEX_TYPE:
            raise TypeError(f"artifactType {data.get('artifactType')!r}")
        parts = []
        for media in (INDEX_FILE_TYPE, INDEX_SIG_TYPE):
            layer = layers[media]
            size = layer["size"]
            if not isinstance(size, int) or not 0 <= size <= INDEX_LIMIT:
                raise TypeError(f"size {size!r}")
            parts.append(client.blob(repo, str(layer["digest"]), size))
    except (ValueError, KeyError, TypeError) as exc:
        raise FlightPlanError(
            "install.index_untrusted", f"{where}: the `index` tag is not a versions index ({exc})"
        ) from None
    return parts[0], parts[1]


class IndexState:
    """The highest index sequence seen per name (`index-state.json`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def seen(self, name: str) -> int | None:
        data = self._read()
        value = data.get(name)
        return value if isinstance(value, int) else None

    def record(self, name: str, sequence: int) -> None:
        data = self._read()
        if isinstance(data.get(name), int) and data[name] >= sequence:
            return
        data[name] = sequence
        temp = self.path.with_suffix(".tmp")
        temp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", "utf-8")
        temp.replace(self.path)

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        try:
            data = read_json(read_regular(self.path, INDEX_LIMIT).decode("utf-8"))
        except (OSError, ValueError):
            raise FlightPlanError(
                "install.index_state_unreadable",
                f"{self.path} is damaged",
                hint="remove it to forget the index sequences seen (first trust again)",
            ) from None
        return data if isinstance(data, dict) else {}


def _entry(value: object) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(
        isinstance(value.get(k), str) for k in ("id", "digest")
    ):
        raise TypeError("a versions entry is not {id, version, digest}")
    return value


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not an integer")
    return value


def _iso(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


__all__ = [
    "INDEX_FILE_TYPE",
    "INDEX_SIG_TYPE",
    "INDEX_TAG",
    "INDEX_TYPE",
    "IndexState",
    "VersionsIndex",
    "check_index",
    "check_newest",
    "fetch_index",
    "next_index",
    "push_index",
    "read_index",
    "signed",
]
