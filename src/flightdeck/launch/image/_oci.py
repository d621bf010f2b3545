"""The config and manifest of a composed image, byte for byte the same for
the same inputs.

The base's config is kept as the base has it, with three changes: the new
layers' diff ids appended to `rootfs.diff_ids`, one `history` entry per
Feature when the base keeps a history (time 0, so no clock enters), and the
Features' `containerEnv` set in `config.Env`. Both documents are written as
sorted, compact JSON; the manifest lists the base's layer descriptors as the
base's manifest has them, then one plain tar layer per Feature, and names
the base in the standard annotations.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flightdeck._json import JsonError, read_json
from flightdeck.launch.core._errors import LaunchError

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar"
EPOCH = "1970-01-01T00:00:00Z"


@dataclass(frozen=True)
class NewLayer:
    digest: str  # of the uncompressed tar: also its diff id
    size: int
    created_by: str  # the history line: which Feature made it


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def composed_config(
    base_config: bytes,
    base_layers: int,
    layers: Sequence[NewLayer],
    env: Mapping[str, str],
    where: str,
) -> bytes:
    try:
        config = read_json(base_config)
    except JsonError as exc:
        raise LaunchError("compose.bad_base", f"{where}: its config is not JSON ({exc})") from None
    if not isinstance(config, dict):
        raise LaunchError("compose.bad_base", f"{where}: its config is not an object")
    rootfs = config.get("rootfs")
    rootfs = dict(rootfs) if isinstance(rootfs, dict) else {"type": "layers"}
    ids = rootfs.get("diff_ids")
    if not isinstance(ids, list) or len(ids) != base_layers:
        # The new diff ids would name the wrong layers: tools that check
        # them (umoci, containerd) would refuse the composed image.
        raise LaunchError(
            "compose.bad_base",
            f"{where}: its config's rootfs.diff_ids name"
            f" {len(ids) if isinstance(ids, list) else 'no'} layers, its manifest {base_layers}",
            hint="a valid image has one diff id per layer; rebuild or choose another base",
        )
    rootfs["diff_ids"] = [*ids, *(x.digest for x in layers)]
    config["rootfs"] = rootfs
    history = config.get("history")
    if isinstance(history, list):
        config["history"] = [
            *history,
            *({"created": EPOCH, "created_by": layer.created_by} for layer in layers),
        ]
    if env:
        inner = config.get("config")
        inner = dict(inner) if isinstance(inner, dict) else {}
        current = [e for e in inner.get("Env") or [] if isinstance(e, str)]
        kept = [e for e in current if e.partition("=")[0] not in env]
        inner["Env"] = [*kept, *(f"{k}={v}" for k, v in sorted(env.items()))]
        config["config"] = inner
    return canonical(config)


def composed_manifest(
    base_manifest: Mapping[str, Any], config: bytes, layers: Sequence[NewLayer], base: str
) -> bytes:
    base_layers = [
        {
            "mediaType": item.get("mediaType", LAYER_TYPE),
            "digest": item["digest"],
            "size": item["size"],
        }
        for item in base_manifest["layers"]
    ]
    name, _, digest = base.rpartition("@")
    return canonical(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": {"mediaType": CONFIG_TYPE, "digest": sha256(config), "size": len(config)},
            "layers": [
                *base_layers,
                *({"mediaType": LAYER_TYPE, "digest": x.digest, "size": x.size} for x in layers),
            ],
            "annotations": {
                "org.opencontainers.image.base.digest": digest,
                "org.opencontainers.image.base.name": name,
            },
        }
    )


__all__ = ["NewLayer", "canonical", "composed_config", "composed_manifest", "sha256"]
