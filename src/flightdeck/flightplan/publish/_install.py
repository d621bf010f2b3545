"""`flightdeck install HOST/REPO[:TAG]`: nothing unverified lands.

Order: the reference (no tag is `latest`; a digest alone is refused: the
tag is what the publisher moves, and the version id comes from the signed
content); the manifest, at most 1 MiB, judged (`read_artifact`) before any
blob is fetched; each file's blob, at most its declared size and refused
unless it is its digest, written to a staging folder outside the store;
`verify_plan` on that folder with the user's keyring and a copy of the trust
state (so a refusal records nothing); the artifact's name and version-id
annotations against what was verified; then the store's own atomic write,
`origin.json` in the same rename, and verify once more from the store, which
records the trust state. Installing the same artifact again is a no-op.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck._json import read_json
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._verify import VerifiedPlan, verify_plan
from flightdeck.flightplan.publish._artifact import (
    MANIFEST_LIMIT,
    Artifact,
    read_artifact,
)
from flightdeck.flightplan.publish._drivers import DRIVERS_TYPE, unpack
from flightdeck.flightplan.publish._index import (
    IndexState,
    VersionsIndex,
    check_index,
    check_newest,
    fetch_index,
    read_index,
)
from flightdeck.flightplan.publish._publish import repository_ref
from flightdeck.flightplan.registry._images import ImageRef
from flightdeck.flightplan.registry._oci import OciClient
from flightdeck.flightplan.registry._registry_http import RegistryRefused
from flightdeck.flightplan.signing._keyring import Keyring
from flightdeck.flightplan.signing._trust import TrustState
from flightdeck.flightplan.store._store import SkillStore

ORIGIN_FILE = "origin.json"


@dataclass(frozen=True)
class InstallResult:
    name: str
    version: str | None
    id: str
    publisher: str | None
    digest: str  # the artifact manifest's
    origin: dict[str, Any]
    path: Path
    created: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "name": self.name,
            "version": self.version,
            "id": self.id,
            "publisher": self.publisher,
            "digest": self.digest,
            "origin": self.origin,
            "path": str(self.path),
            "created": self.created,
        }


def install(
    reference: str,
    client: OciClient,
    *,
    store: SkillStore | None = None,
    keyring: Keyring | None = None,
    trust: TrustState | None = None,
    progress: Callable[[str], None] = lambda line: None,
    index_state: IndexState | None = None,
    origin: bool = True,
) -> InstallResult:
    """Install `reference`; `origin` False (an imported layout) writes no
    origin.json: there is no registry to pull the image from."""
    if "@" in reference:
        raise FlightPlanError(
            "install.digest_ref",
            f"{reference!r} names a digest: install takes HOST/REPO[:TAG]",
            hint="install by the tag the publisher set (the version id, the label or latest);"
            " the digest is checked after the fetch",
        )
    ref = repository_ref(reference, "install.invalid_ref", tag=True)
    tag = ref.tag or "latest"
    where = f"{ref.registry}/{ref.repository}:{tag}"
    store = store or SkillStore()
    trust = trust or TrustState()
    keyring = keyring or Keyring()
    index_state = index_state or IndexState(store.root.parent / "index-state.json")
    try:
        fetched = client.manifest(ref, tag, MANIFEST_LIMIT)
        artifact = read_artifact(fetched.body, where)
        index = _index(client, ref, tag, artifact, fetched.digest, keyring, index_state, where)
        with tempfile.TemporaryDirectory(prefix="flightdeck-install-") as scratch:
            staging = Path(scratch) / artifact.version_id
            staging.mkdir()
            files = _fetch(client, ref, artifact, staging, progress)
            copy = Path(scratch) / "trust.json"
            if trust.path.is_file():
                shutil.copyfile(trust.path, copy)
            checked = verify_plan(staging, store=store, keyring=keyring, trust=TrustState(copy))
            _check_identity(artifact, checked, where)
            source = {
                "registry": ref.registry,
                "repository": ref.repository,
                "tag": tag,
                "digest": fetched.digest,
            }
            beside = {}
            if origin:
                beside[ORIGIN_FILE] = (json.dumps(source, indent=2, sort_keys=True) + "\n").encode()
            for layer in artifact.layers:
                if layer.media_type == DRIVERS_TYPE:  # checked against the verified pins
                    raw = client.blob(ref, layer.digest, layer.size)
                    beside.update(unpack(raw, checked.lock.code_pins, where))
            identity = (checked.name, checked.content_hash, checked.version, checked.publisher)
            statement = read_json(files["SKILL.md.sig"]).get("statement") or {}
            entry, created = store.put_verified(
                identity, files, checked.signer_key_id, statement.get("signedAt"), beside
            )
    except RegistryRefused as exc:
        code = _CODES.get(exc.code, "registry_refused")
        raise FlightPlanError(
            f"install.{code}",
            f"installing {where}: {exc.message}" + ("" if code == exc.code else f" ({exc.code})"),
            hint=_HINTS.get(exc.code),
            where=where,
        ) from None
    final = verify_plan(
        f"{checked.name}@{artifact.version_id}", store=store, keyring=keyring, trust=trust
    )
    if index is not None:
        index_state.record(index.name, index.sequence)
    return InstallResult(
        final.name,
        final.version,
        artifact.version_id,
        final.publisher,
        fetched.digest,
        _origin(entry.path),
        entry.path,
        created,
    )


def _index(
    client: OciClient,
    ref: ImageRef,
    tag: str,
    artifact: Artifact,
    digest: str,
    keyring: Keyring,
    state: IndexState,
    where: str,
) -> VersionsIndex | None:
    """For `latest`: the signed versions index, checked, naming this
    artifact as its newest; None without one (or for another tag)."""
    if tag != "latest":
        return None
    parts = fetch_index(client, ref, where)
    if parts is None:
        return None
    index, envelope = read_index(*parts, where)
    if index.name != artifact.name:
        raise FlightPlanError(
            "install.index_mismatch",
            f"{where}: the versions index is of {index.name!r}, the artifact {artifact.name!r}",
        )
    check_index(index, parts[0], envelope, keyring, state.seen(index.name), where)
    check_newest(index, artifact.version_id, digest, where)
    return index


def _fetch(
    client: OciClient,
    ref: ImageRef,
    artifact: Artifact,
    staging: Path,
    progress: Callable[[str], None],
) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for layer in artifact.layers:
        if layer.media_type == DRIVERS_TYPE:
            continue  # fetched once verify has read the pins it must match
        name = artifact.file_name(layer)
        raw = client.blob(ref, layer.digest, layer.size)
        (staging / name).write_bytes(raw)
        files[name] = raw
        progress(f"  {name} {layer.digest[:19]} ({layer.size:,} bytes)")
    return files


def _check_identity(artifact: Artifact, verified: VerifiedPlan, where: str) -> None:
    """The annotations are unsigned: they must say what the signed content says."""
    wrong = []
    if artifact.name != verified.name:
        wrong.append(f"name {artifact.name!r} is {verified.name!r}")
    if not verified.content_hash.removeprefix("sha256:").startswith(artifact.version_id):
        wrong.append(f"version id {artifact.version_id} is {verified.content_hash[7:23]}")
    if artifact.label is not None and artifact.label != verified.version:
        wrong.append(f"label {artifact.label!r} is {verified.version!r}")
    if wrong:
        raise FlightPlanError(
            "install.annotation_mismatch",
            f"{where}: the artifact's annotations do not describe its signed content: "
            + "; ".join(wrong),
            hint="the registry (or whoever wrote the manifest) relabelled the artifact",
            where=where,
        )


def _origin(folder: Path) -> dict[str, Any]:
    try:
        data = read_json((folder / ORIGIN_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}  # installed before from elsewhere, or frozen here
    return data if isinstance(data, dict) else {}


_CODES = {
    "unreachable": "unreachable",
    "unauthorized": "unauthorized",
    "not_found": "not_found",
    "rejected": "rejected",
    "digest_mismatch": "blob_mismatch",
    "too_large": "bad_manifest",
}
_HINTS = {
    "unauthorized": "log in with `docker login HOST` (flightdeck reads ~/.docker/config.json)",
    "unreachable": "is the registry running, and is HOST:PORT right?",
    "not_found": "no such repository or tag: check HOST/REPO[:TAG]",
    "digest_mismatch": "the registry serves other bytes than the artifact names",
    "redirect_refused": "a registry may redirect only where the registry policy allows",
}

__all__ = ["ORIGIN_FILE", "InstallResult", "install"]
