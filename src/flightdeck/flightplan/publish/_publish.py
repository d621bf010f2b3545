"""`flightdeck publish`: a verified stored version, pushed as one artifact.

Order, so an interrupted publish leaves nothing that names what is missing
and `latest` still names the previous complete artifact: verify the stored
version (nothing unverified leaves the machine); copy the image by digest
(the artifact's subject); upload the config and each file's blob; put the
manifest by its digest; link it to its subject (the referrers API when the
registry indexes it, else the OCI 1.1 fallback tag `sha256-<hex>`); then
the tags `<id>`, the semver label when it is a legal tag, and `latest`
last. Every step is idempotent: a re-publish sends the same bytes, skips
every blob, and gets the same manifest digest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck._json import read_json
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._verify import VerifiedPlan, verify_plan
from flightdeck.flightplan.publish._artifact import (
    ARTIFACT_TYPE,
    CODE_PINS_TYPE,
    COSIGNATURE_TYPE,
    EMPTY_CONFIG,
    INDEX_TYPE,
    LOCK_TYPE,
    MANIFEST_TYPE,
    PUBKEY_TYPE,
    SIGNATURE_TYPE,
    SKILL_TYPE,
    Descriptor,
    build_manifest,
    empty_config,
)
from flightdeck.flightplan.publish._copy import MANIFEST_LIMIT, copy_image, copy_layout
from flightdeck.flightplan.publish._drivers import (
    DRIVERS_TITLE,
    DRIVERS_TYPE,
    WORKSPACE_DIR,
    pack,
)
from flightdeck.flightplan.publish._index import (
    fetch_index,
    next_index,
    push_index,
    read_index,
    signed,
)
from flightdeck.flightplan.registry._images import ImageRef, parse_image_ref
from flightdeck.flightplan.registry._oci import OciClient, sha256
from flightdeck.flightplan.registry._registry_http import RegistryRefused
from flightdeck.flightplan.signing._keyring import Keyring
from flightdeck.flightplan.signing._signing import key_id, signature_valid
from flightdeck.flightplan.signing._trust import TrustState
from flightdeck.flightplan.store._store import SkillStore

# An OCI tag: the distribution spec's grammar.
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_ORDER = (SKILL_TYPE, LOCK_TYPE, SIGNATURE_TYPE, PUBKEY_TYPE, CODE_PINS_TYPE)
_FILES = {
    SKILL_TYPE: "SKILL.md",
    LOCK_TYPE: "lock.json",
    SIGNATURE_TYPE: "SKILL.md.sig",
    PUBKEY_TYPE: "signer.pub.pem",
    CODE_PINS_TYPE: "code-pins.json",
}


# A composed image's pinned reference -> the verified OCI layout folder it
# is stored in (raises FlightPlanError when this machine has none).
LocalImage = Callable[[str], Path]


@dataclass(frozen=True)
class PublishResult:
    name: str
    version: str | None
    id: str
    repository: str  # HOST/REPO
    digest: str  # the artifact manifest's
    tags: tuple[str, ...]
    subject: str | None  # the image copied, by digest
    referrers: str | None  # "api", "fallback" (the sha256-<hex> tag) or None
    uploaded: int  # blobs whose bytes were sent (0 on a re-publish)
    warnings: tuple[str, ...] = field(default=())
    index: int | None = None  # the signed versions index's sequence, when signed

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "name": self.name,
            "version": self.version,
            "id": self.id,
            "reference": f"{self.repository}:{self.id}",
            "digest": self.digest,
            "tags": list(self.tags),
            "subject": self.subject,
            "referrers": self.referrers,
            "uploaded": self.uploaded,
            "warnings": list(self.warnings),
            "index": self.index,
        }


def repository_ref(text: str, code: str, *, tag: bool) -> ImageRef:
    """`HOST/REPO` (and `:TAG` when `tag`): a registry host is required."""
    first, slash, _ = text.partition("/")
    explicit = slash and ("." in first or ":" in first or first == "localhost")
    try:
        ref = parse_image_ref(text) if explicit else None
    except FlightPlanError:
        ref = None
    if ref is None or (not tag and (":" in text.partition("/")[2] or ref.digest)):
        raise FlightPlanError(
            code,
            f"{text!r} is not HOST/REPOSITORY" + ("[:TAG]" if tag else ""),
            hint="for example localhost:5000/acme/plans"
            + (":latest" if tag else " (no tag: publish sets the tags)"),
        )
    return ref


def publish(
    target: str,
    registry: str,
    client: OciClient,
    *,
    store: SkillStore | None = None,
    keyring: Keyring | None = None,
    trust: TrustState | None = None,
    progress: Callable[[str], None] = lambda line: None,
    index_key: Ed25519PrivateKey | None = None,
    index_days: int = 30,
    local_image: LocalImage | None = None,
) -> PublishResult:
    """Verify and push `target`; with `index_key`, also sign the versions
    index (`_index`) with it, valid for `index_days`. A composed image is
    copied from the OCI layout folder `local_image` gives for its pinned
    reference (the image cache's, verified: the CLI passes it, as this
    layer imports no runtime)."""
    repo = repository_ref(registry, "publish.invalid_registry", tag=False)
    verified = verify_plan(target, store=store, keyring=keyring, trust=trust)
    try:
        result = _push(verified, repo, client, progress, local_image)
        if index_key is None:
            return result
        sequence = _sign_index(client, repo, result, verified.publisher, index_key, index_days)
        return replace(result, index=sequence)
    except RegistryRefused as exc:
        code = _CODES.get(exc.code, "registry_refused")
        raise FlightPlanError(
            f"publish.{code}",
            f"publishing to {repo.registry}/{repo.repository}: {exc.message}"
            + ("" if code == exc.code else f" ({exc.code})"),
            hint=_HINTS.get(exc.code),
        ) from None


def _push(
    verified: VerifiedPlan,
    repo: ImageRef,
    client: OciClient,
    progress: Callable[[str], None],
    local_image: LocalImage | None,
) -> PublishResult:
    folder = verified.path.parent
    version_id = verified.content_hash.removeprefix("sha256:")[:16]
    subject = None
    if verified.lock.resolved_images:
        image = verified.lock.resolved_images[0]
        if image.features:  # composed at freeze: in this machine's image cache only
            if local_image is None:
                raise FlightPlanError(
                    "publish.image_not_local",
                    f"the composed image {image.pinned} can only be copied from an image cache",
                )
            digest = image.pinned.rpartition("@")[2]
            subject = copy_layout(client, local_image(image.pinned), digest, repo, progress)
        else:
            subject = copy_image(client, image.pinned, repo, progress)
    layers, uploaded = [], 0
    client.push_blob(repo, empty_config().digest, EMPTY_CONFIG)
    for media, name, raw in _files(folder):
        digest = sha256(raw)
        uploaded += client.push_blob(repo, digest, raw)
        layers.append(Descriptor(media, digest, len(raw), name))
        progress(f"  {name} {digest[:19]} ({len(raw):,} bytes)")
    drivers = pack(_frozen_workspace(folder), verified.lock.code_pins)
    if drivers is not None:
        digest = sha256(drivers)
        uploaded += client.push_blob(repo, digest, drivers)
        layers.append(Descriptor(DRIVERS_TYPE, digest, len(drivers), DRIVERS_TITLE))
        progress(f"  {DRIVERS_TITLE} {digest[:19]} ({len(drivers):,} bytes)")
    label = verified.version
    manifest = build_manifest(verified.name, version_id, label, layers, subject)
    digest = sha256(manifest)
    indexed = client.push_manifest(repo, digest, manifest, MANIFEST_TYPE)
    linked = None
    if subject is not None:
        linked = "api" if indexed else _link(client, repo, subject, manifest)
    warnings = []
    tags = [version_id]
    if label and _TAG.match(label):
        tags.append(label)
    elif label:
        warnings.append(f"the version label {label!r} is not a legal OCI tag: not tagged")
    tags.append("latest")  # last: it moves only once everything else is there
    for tag in tags:
        client.push_manifest(repo, tag, manifest, MANIFEST_TYPE)
    progress(f"pushed {repo.registry}/{repo.repository}@{digest}")
    return PublishResult(
        verified.name,
        verified.version,
        version_id,
        f"{repo.registry}/{repo.repository}",
        digest,
        tuple(tags),
        subject.digest if subject else None,
        linked,
        uploaded,
        tuple(warnings),
    )


def _files(folder: Path) -> list[tuple[str, str, bytes]]:
    """The stored version's files as (media type, file name, bytes): the
    four every version has, its code pins, its co-signatures (sorted)."""
    out = []
    for media in _ORDER:
        path = folder / _FILES[media]
        if media == CODE_PINS_TYPE and not path.is_file():
            continue
        out.append((media, path.name, path.read_bytes()))
    for path in sorted(folder.glob("SKILL.md.*.sig")):
        out.append((COSIGNATURE_TYPE, path.name, path.read_bytes()))
    return out


def _sign_index(
    client: OciClient,
    repo: ImageRef,
    result: PublishResult,
    publisher: str | None,
    key: Ed25519PrivateKey,
    days: int,
) -> int:
    """Add the version to the signed versions index (the newest entry)."""
    where = f"{repo.registry}/{repo.repository}:index"
    parts = fetch_index(client, repo, where)
    old = None
    if parts is not None:
        try:
            old, envelope = read_index(*parts, where)
        except FlightPlanError as exc:
            raise FlightPlanError("publish.index_invalid", exc.message) from None
        mine = key_id(key.public_key())
        if envelope["keyId"] != mine or not signature_valid(
            key.public_key(), parts[0], envelope["signature"]
        ):
            raise FlightPlanError(
                "publish.index_invalid",
                f"{where} is not signed by this key ({mine}): it was not written by this"
                " publisher's publish, or the key changed",
                hint="sign with the key that signed the index before",
            )
    entry = {"id": result.id, "version": result.version, "digest": result.digest}
    index = next_index(old, result.name, publisher, entry, days)
    if index is None:
        assert old is not None
        return old.sequence
    push_index(client, repo, *signed(index, key))
    return index.sequence


def _frozen_workspace(folder: Path) -> Path | None:
    """Where the version was frozen (meta.json, unsigned: only where to look;
    `pack` checks every file against the signed pins), or, for a version
    installed here, the driver files install stored beside it."""
    try:
        meta = read_json((folder / "meta.json").read_text("utf-8"))
    except (OSError, ValueError):
        meta = None
    where = meta.get("workspace") if isinstance(meta, dict) else None
    if isinstance(where, str):
        return Path(where)
    return folder / WORKSPACE_DIR if (folder / WORKSPACE_DIR).is_dir() else None


def _link(client: OciClient, repo: ImageRef, subject: Descriptor, manifest: bytes) -> str:
    """Make the artifact findable from its subject: the referrers API when
    the registry has one (it indexed the manifest), else the fallback tag
    `sha256-<subject hex>`, an index listing every referrer, to which this
    artifact is added once (a re-publish changes nothing)."""
    if client.referrers(repo, subject.digest, MANIFEST_LIMIT) is not None:
        return "api"
    tag = "sha256-" + subject.digest.removeprefix("sha256:")
    entries: list[Any] = []
    try:
        current = client.manifest(repo, tag, MANIFEST_LIMIT).body
        data = read_json(current)
        if isinstance(data, dict) and isinstance(data.get("manifests"), list):
            entries = data["manifests"]
    except RegistryRefused as exc:
        if exc.code != "not_found":
            raise
    except ValueError:
        entries = []  # not an index: replaced by one
    digest = sha256(manifest)
    if any(isinstance(e, dict) and e.get("digest") == digest for e in entries):
        return "fallback"
    annotations = read_json(manifest)["annotations"]
    entries.append(
        {
            "mediaType": MANIFEST_TYPE,
            "digest": digest,
            "size": len(manifest),
            "artifactType": ARTIFACT_TYPE,
            "annotations": annotations,
        }
    )
    index = {"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": entries}
    body = json.dumps(index, sort_keys=True, separators=(",", ":")).encode()
    client.push_manifest(repo, tag, body, INDEX_TYPE)
    return "fallback"


_CODES = {
    "unreachable": "unreachable",
    "unauthorized": "unauthorized",
    "not_found": "image_not_found",
    "rejected": "rejected",
    "digest_mismatch": "image_mismatch",
    "too_large": "image_invalid",
}
_HINTS = {
    "unauthorized": "log in with `docker login HOST` (flightdeck reads ~/.docker/config.json)",
    "unreachable": "is the registry running, and is HOST:PORT right?",
    "redirect_refused": "a registry may redirect only where the registry policy allows",
    "not_found": "the plan's image is no longer in its source registry",
    "digest_mismatch": "the source registry serves other bytes than the lock pins",
}

__all__ = ["LocalImage", "PublishResult", "publish", "repository_ref"]
