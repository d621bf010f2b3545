"""The Flight Plan artifact: the OCI manifest publish writes and install judges.

Aileron's shape (an OCI 1.1 image manifest, its `artifactType`, the empty
config, one layer per file found by media type, the fixed `created`
annotation so a re-publish is byte-identical, the name and version-id
annotations, `subject` = the plan's image), with flightdeck's own files
under their own media types (docs/canonical-bytes.md, "The OCI artifact").
The manifest is serialised with sorted keys and no whitespace: the same
stored version always gives the same bytes, so the same digest.

`read_artifact` judges a manifest a registry served before anything it
names is fetched: JSON of bounded depth, the artifact type, each layer a
well-formed descriptor under its size bound, each required file once.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flightdeck._bounded import MiB
from flightdeck._json import read_json
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._limits import PLAN_FILE_BYTES, STORE_FILE_BYTES
from flightdeck.flightplan.publish._drivers import DRIVERS_LIMIT, DRIVERS_TITLE, DRIVERS_TYPE

ARTIFACT_TYPE = "application/vnd.aileron.flightplan.artifact.v1+json"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
EMPTY_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_CONFIG = b"{}"
# Aileron's types for the files both write the same way.
SKILL_TYPE = "application/vnd.aileron.flightplan.skill.v1+markdown"
PUBKEY_TYPE = "application/vnd.aileron.flightplan.pubkey.v1"
# Aileron's own signed files, which flightdeck does not write.
AILERON_LOCK_TYPE = "application/vnd.aileron.flightplan.lock.v1+yaml"
AILERON_SIGNATURE_TYPE = "application/vnd.aileron.flightplan.signature.v1"
# flightdeck's files.
LOCK_TYPE = "application/vnd.flightdeck.flightplan.lock.v1+json"
SIGNATURE_TYPE = "application/vnd.flightdeck.flightplan.signature.v1+json"
CODE_PINS_TYPE = "application/vnd.flightdeck.flightplan.code-pins.v1+json"
COSIGNATURE_TYPE = "application/vnd.flightdeck.flightplan.cosignature.v1+json"

CREATED = "org.opencontainers.image.created"
TITLE = "org.opencontainers.image.title"
NAME = "ai.aileron.flightplan.name"
VERSION_ID = "ai.aileron.flightplan.version"
LABEL = "dev.flightdeck.flightplan.label"
EPOCH = "1970-01-01T00:00:00Z"

# The file each type is stored as, and the most bytes install reads of it:
# what verify itself would read of that file in the store.
FILES: dict[str, tuple[str, int]] = {
    SKILL_TYPE: ("SKILL.md", PLAN_FILE_BYTES),
    LOCK_TYPE: ("lock.json", PLAN_FILE_BYTES),
    SIGNATURE_TYPE: ("SKILL.md.sig", STORE_FILE_BYTES),
    PUBKEY_TYPE: ("signer.pub.pem", STORE_FILE_BYTES),
    CODE_PINS_TYPE: ("code-pins.json", PLAN_FILE_BYTES),
    COSIGNATURE_TYPE: ("", STORE_FILE_BYTES),  # named by its title
    DRIVERS_TYPE: (DRIVERS_TITLE, DRIVERS_LIMIT),  # unpacked, never stored as is
}
REQUIRED = (SKILL_TYPE, LOCK_TYPE, SIGNATURE_TYPE, PUBKEY_TYPE)
MANIFEST_LIMIT = 1 * MiB
MAX_LAYERS = 64
MAX_DEPTH = 64
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_COSIGNATURE = re.compile(r"^SKILL\.md\.[0-9a-f]{64}\.sig$")
_VERSION_ID = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class Descriptor:
    media_type: str
    digest: str
    size: int
    title: str = ""
    artifact_type: str = ""

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "mediaType": self.media_type,
            "digest": self.digest,
            "size": self.size,
        }
        if self.title:
            data["annotations"] = {TITLE: self.title}
        if self.artifact_type:
            data["artifactType"] = self.artifact_type
        return data


@dataclass(frozen=True)
class Artifact:
    """A judged artifact manifest: what install fetches, and by what name."""

    name: str
    version_id: str
    label: str | None
    layers: tuple[Descriptor, ...]  # flightdeck's files only, each once (co-signatures apart)
    subject: Descriptor | None

    def file_name(self, layer: Descriptor) -> str:
        return FILES[layer.media_type][0] or layer.title


def empty_config() -> Descriptor:
    digest = "sha256:" + hashlib.sha256(EMPTY_CONFIG).hexdigest()
    return Descriptor(EMPTY_TYPE, digest, len(EMPTY_CONFIG))


def build_manifest(
    name: str,
    version_id: str,
    label: str | None,
    layers: list[Descriptor],
    subject: Descriptor | None,
) -> bytes:
    """The artifact manifest's bytes: sorted keys, no whitespace."""
    config = empty_config().to_data()
    config["data"] = base64.b64encode(EMPTY_CONFIG).decode()
    annotations = {CREATED: EPOCH, NAME: name, VERSION_ID: version_id}
    if label:
        annotations[LABEL] = label
    manifest: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": config,
        "layers": [layer.to_data() for layer in layers],
        "annotations": annotations,
    }
    if subject is not None:
        manifest["subject"] = subject.to_data()
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


def read_artifact(body: bytes, where: str) -> Artifact:
    """Judge a served manifest; a located `install.*` error when refused."""
    data = _json(body, where)
    if data.get("mediaType", MANIFEST_TYPE) != MANIFEST_TYPE or data.get("schemaVersion") != 2:
        raise _error(
            "install.wrong_artifact_type",
            f"{where} is not an OCI image manifest (mediaType {data.get('mediaType')!r})",
            where,
        )
    kind = data.get("artifactType")
    if kind != ARTIFACT_TYPE:
        config = data.get("config")
        config_type = config.get("mediaType") if isinstance(config, dict) else None
        raise _error(
            "install.wrong_artifact_type",
            f"{where} is {kind!r}, not a Flight Plan artifact ({ARTIFACT_TYPE})"
            + (f"; its config is {config_type!r}" if kind is None else ""),
            where,
        )
    raw_layers = data.get("layers")
    if not isinstance(raw_layers, list) or len(raw_layers) > MAX_LAYERS:
        raise _error(
            "install.bad_manifest", f"{where}: layers must be a list of at most {MAX_LAYERS}", where
        )
    layers = [_descriptor(item, where) for item in raw_layers]
    types = [layer.media_type for layer in layers]
    if SIGNATURE_TYPE not in types and AILERON_SIGNATURE_TYPE in types:
        raise _aileron(data, types, where)
    mine = [layer for layer in layers if layer.media_type in FILES]
    for media in REQUIRED:
        count = types.count(media)
        if count != 1:
            raise _error(
                "install.layer_missing" if count == 0 else "install.bad_manifest",
                f"{where}: {count} layers of type {media} (one {FILES[media][0]} is required)",
                where,
            )
    if types.count(CODE_PINS_TYPE) > 1 or types.count(DRIVERS_TYPE) > 1:
        raise _error(
            "install.bad_manifest", f"{where}: more than one code-pins or drivers layer", where
        )
    titles = [layer.title for layer in mine if layer.media_type == COSIGNATURE_TYPE]
    if len(set(titles)) != len(titles) or not all(_COSIGNATURE.match(t) for t in titles):
        raise _error(
            "install.bad_manifest", f"{where}: co-signature layers misnamed {titles}", where
        )
    for layer in mine:
        bound = FILES[layer.media_type][1]
        if layer.size > bound:
            raise _error(
                "install.layer_too_large",
                f"{where}: the {layer.media_type} layer declares {layer.size:,} bytes,"
                f" over the {bound:,} allowed",
                where,
            )
    annotations = data.get("annotations")
    name, version_id, label = _identity(annotations, where)
    subject = data.get("subject")
    return Artifact(
        name,
        version_id,
        label,
        tuple(mine),
        _descriptor(subject, where) if subject is not None else None,
    )


def _identity(annotations: object, where: str) -> tuple[str, str, str | None]:
    if not isinstance(annotations, dict):
        raise _error("install.bad_manifest", f"{where}: no annotations", where)
    name, version_id = annotations.get(NAME), annotations.get(VERSION_ID)
    label = annotations.get(LABEL)
    if not isinstance(name, str) or not isinstance(version_id, str):
        raise _error("install.bad_manifest", f"{where}: no {NAME} / {VERSION_ID} annotation", where)
    if not _VERSION_ID.match(version_id):
        raise _error(
            "install.bad_manifest", f"{where}: {VERSION_ID} {version_id!r} is not 16 hex", where
        )
    return name, version_id, label if isinstance(label, str) else None


def _descriptor(item: object, where: str) -> Descriptor:
    if not isinstance(item, dict):
        raise _error("install.bad_manifest", f"{where}: a descriptor is not an object", where)
    media, digest, size = item.get("mediaType"), item.get("digest"), item.get("size")
    annotations = item.get("annotations", {})
    title = annotations.get(TITLE, "") if isinstance(annotations, dict) else None
    if (
        not isinstance(media, str)
        or not isinstance(digest, str)
        or not _DIGEST.match(digest)
        or not isinstance(size, int)
        or isinstance(size, bool)
        or size < 0
        or not isinstance(title, str)
    ):
        raise _error(
            "install.bad_manifest",
            f"{where}: descriptor {json.dumps(item)[:200]} is not a sha256 descriptor",
            where,
        )
    return Descriptor(media, digest, size, title)


def _json(body: bytes, where: str) -> dict[str, Any]:
    try:
        data = read_json(body.decode("utf-8"))
    except ValueError:
        raise _error("install.bad_manifest", f"{where} is not JSON", where) from None
    if not isinstance(data, dict) or _depth(data) > MAX_DEPTH:
        raise _error(
            "install.bad_manifest",
            f"{where} is not a JSON object of at most {MAX_DEPTH} levels",
            where,
        )
    return data


def _depth(value: object) -> int:
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        deepest = max(deepest, level)
        if isinstance(item, Mapping):
            todo.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            todo.extend((child, level + 1) for child in item)
    return deepest


def _aileron(data: dict[str, Any], types: list[str], where: str) -> FlightPlanError:
    annotations = data.get("annotations")
    notes = annotations if isinstance(annotations, dict) else {}
    return _error(
        "install.aileron_artifact",
        f"{where} is an Aileron Flight Plan artifact (name {notes.get(NAME)!r}, version"
        f" {notes.get(VERSION_ID)!r}; layers {sorted(set(types))}). Its signature is a raw"
        " Ed25519 signature over the bytes Aileron hashes (the YAML its emitter prints, with"
        " the lock in YAML), and it carries no signed statement binding name, label,"
        " publisher and lock: flightdeck signs canonical JSON bytes (docs/canonical-bytes.md)"
        " and verifies that statement, so nothing here can be verified the way a stored"
        " version must be",
        where,
        hint="ask the publisher to publish it with `flightdeck publish`, or freeze its SKILL.md"
        " locally after reading it",
    )


def _error(code: str, message: str, where: str, hint: str | None = None) -> FlightPlanError:
    return FlightPlanError(code, message, where=where, hint=hint)


__all__ = [
    "ARTIFACT_TYPE",
    "FILES",
    "INDEX_TYPE",
    "MANIFEST_LIMIT",
    "Artifact",
    "Descriptor",
    "build_manifest",
    "empty_config",
    "read_artifact",
]
