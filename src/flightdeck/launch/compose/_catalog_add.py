"""`catalog add`: a Feature from a registry reference or a local folder,
pinned by digest.

A folder is packed reproducibly (`_feature_pack`) and pushed to the
repository given (`HOST/REPO[:TAG]`, the tag defaulting to the version),
then added as that reference.

The reference's tag is resolved to the digest it names now, and the catalog
keeps both (`repo:tag@sha256:…`), so composition can later tell a moved tag
(`compose.feature_tag_moved`). The Feature is fetched and read the way
composition reads it before anything is written: a Feature composition
would refuse (`compose.bad_feature`, `compose.bad_option`, a digest that
does not match) never enters the catalog.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path
from typing import Any

from flightdeck.flightplan import FeaturePin, OciResolver, parse_image_ref
from flightdeck.flightplan.model._features import add_feature
from flightdeck.launch.compose._feature import fetch_feature
from flightdeck.launch.compose._feature_pack import (
    MANIFEST_MEDIA,
    PackedFeature,
    feature_manifest,
    pack_feature,
)
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._pull_limits import configured_limits


def _pinned(resolver: OciResolver, reference: str) -> str:
    ref = parse_image_ref(reference)
    resolved = resolver.resolve(reference)
    if resolved is None:
        raise LaunchError("compose.feature_unavailable", f"{reference} is not in its registry")
    digest = resolved.rpartition("@")[2]
    tag = f":{ref.tag}" if ref.tag and f":{ref.tag}" in reference.partition("@")[0] else ""
    return f"{ref.registry}/{ref.repository}{tag}@{digest}"


_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")


def push_folder(
    folder: Path, target: str, version: str, insecure_hosts: frozenset[str]
) -> tuple[str, PackedFeature]:
    """Pack `folder` and push it to `target` (`HOST/REPO[:TAG]`); the
    reference `HOST/REPO:TAG@sha256:…` and what was packed."""
    from flightdeck.flightplan import FlightPlanError, RegistryRefused
    from flightdeck.flightplan.publish._publish import repository_ref
    from flightdeck.flightplan.registry._credentials import docker_credentials
    from flightdeck.flightplan.registry._oci import OciClient, sha256

    packed = pack_feature(folder)
    ref = repository_ref(target, "catalog.invalid_target", tag=True)
    # The parser reads no tag as `latest`: only a tag written in the target counts.
    tag = ref.tag if ref.tag and ":" in target.rpartition("/")[2] else version
    if not _TAG.match(tag):
        raise FlightPlanError(
            "catalog.invalid_target",
            f"{tag!r} is not an OCI tag",
            hint="name the tag: --push HOST/REPO:TAG",
        )
    repo = dataclasses.replace(ref, tag=None)
    config = b"{}"
    manifest = feature_manifest(packed, config)
    client = OciClient(insecure_hosts=insecure_hosts, auth=docker_credentials)
    try:
        for blob in (config, packed.tarball):
            client.push_blob(repo, sha256(blob), blob)
        client.push_manifest(repo, sha256(manifest), manifest, MANIFEST_MEDIA)
        client.push_manifest(repo, tag, manifest, MANIFEST_MEDIA)
    except RegistryRefused as exc:
        raise FlightPlanError(
            "catalog.push_failed",
            f"pushing the Feature of {folder} to {ref.registry}/{ref.repository}: {exc.message}",
            hint="is the registry running, and may you push there (docker login HOST)?",
        ) from None
    finally:
        client.close()
    return f"{ref.registry}/{ref.repository}:{tag}@{sha256(manifest)}", packed


def pin_feature(
    path: Path, pin: FeaturePin, insecure_hosts: frozenset[str], runner_base: str | None
) -> dict[str, Any]:
    resolver = OciResolver(insecure_hosts=insecure_hosts)
    try:
        pinned = dataclasses.replace(pin, feature=_pinned(resolver, pin.feature))
        base = _pinned(resolver, runner_base) if runner_base is not None else None
        with tempfile.TemporaryDirectory(prefix="fd-catalog-") as scratch:
            fetch_feature(pinned, resolver, Path(scratch), configured_limits(None))
    finally:
        resolver.close()
    checked = add_feature(path, pinned, runner_base=base)
    network = list(checked.tools[pin.tool][pin.version].network)
    return {
        "feature": pinned.feature,
        "options": dict(pinned.options),
        "network": network,
        "runner_base": base,
    }


__all__ = ["pin_feature", "push_folder"]
