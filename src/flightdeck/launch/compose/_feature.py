"""A Dev Container Feature, fetched by digest and unpacked (issue 32).

A Feature is an OCI artifact: a manifest whose layer is the Feature's
tarball (`devcontainer-feature.json` and `install.sh` at its root). It is
pulled with the image puller, so the manifest digest the catalog pins
decides every byte (a changed byte is `compose.feature_mismatch`); when the
catalog's reference also names a tag, the tag must still point at that
digest (`compose.feature_tag_moved`: someone re-pushed the tag, and the
catalog should be looked at again). The tarball is unpacked with the image
unpacker, so a member climbing out of its folder is refused
(`compose.bad_feature`) like a hostile layer.

Options reach `install.sh` as environment variables (the Features spec):
the option id with every character other than a letter, digit or `_`
replaced by `_`, leading digits and underscores replaced by one `_`, in
upper case; the catalog's value, else the Feature's `default`. An option
the Feature does not declare is refused (`compose.bad_option`).
"""

from __future__ import annotations

import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck._json import JsonError, read_json
from flightdeck.flightplan import FeaturePin, FlightPlanError, OciResolver, parse_image_ref
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.image._layout import blob_file
from flightdeck.launch.image._pull import LAYER_TYPES, manifest_blobs, pull
from flightdeck.launch.image._pull_limits import PullLimits
from flightdeck.launch.image._unpack import unpack

METADATA = "devcontainer-feature.json"
METADATA_LIMIT = 1 << 20


@dataclass(frozen=True)
class Feature:
    pin: FeaturePin
    pinned: str  # `<registry>/<repository>@sha256:<hex>`: what was fetched
    folder: Path  # the unpacked tarball
    env: Mapping[str, str]  # the options, as install.sh sees them
    container_env: Mapping[str, str]  # set in the composed image's config
    # The install order's inputs (`_order`): the metadata's `id`, the
    # Features it `dependsOn` (keys) and `installsAfter`.
    feature_id: str = ""
    depends_on: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def option_variable(option: str) -> str:
    name = re.sub(r"[^\w]", "_", option, flags=re.ASCII)
    return re.sub(r"^[\d_]+", "_", name).upper()


def fetch_feature(
    pin: FeaturePin, resolver: OciResolver, into: Path, limits: PullLimits
) -> Feature:
    try:
        ref = parse_image_ref(pin.feature)
    except FlightPlanError as exc:
        raise LaunchError(
            "compose.bad_feature", f"{pin.tool}@{pin.version}: {exc.message}"
        ) from None
    assert ref.digest is not None  # the catalog refuses a reference without one
    pinned = ref.pinned
    if ref.tag is not None:
        _check_tag(resolver, f"{ref.registry}/{ref.repository}:{ref.tag}", ref.digest, pin)
    try:
        manifest, _ = pull(pinned, into, resolver, limits)
        _, layers = manifest_blobs(manifest, pinned)
        if len(layers) != 1:
            raise LaunchError(
                "compose.bad_feature", f"{pinned} has {len(layers)} layers, not one tarball"
            )
        blob = layers[0]
        unpack(
            [(blob_file(into, blob.hex), LAYER_TYPES[blob.media_type])], into / "feature", limits
        )
    except LaunchError as exc:
        raise _feature_error(exc, pin) from None
    folder = into / "feature"
    env, container, data = _read_metadata(folder, pin)
    return Feature(pin, pinned, folder, env, container, *_order_fields(data, pin))


def _check_tag(resolver: OciResolver, tagged: str, digest: str, pin: FeaturePin) -> None:
    try:
        now = resolver.resolve(tagged)
    except FlightPlanError as exc:
        raise LaunchError(
            "compose.feature_unavailable", f"{tagged}: {exc.message}", hint=exc.hint
        ) from None
    if now is None or not now.endswith("@" + digest):
        raise LaunchError(
            "compose.feature_tag_moved",
            f"the catalog pins {pin.tool}@{pin.version} to {tagged}@{digest}, but the tag"
            f" now names {now.rpartition('@')[2] if now else 'nothing'}",
            hint="the Feature was re-published: review it and pin the new digest in the"
            " catalog (`flightdeck catalog add`), or pin the digest alone",
        )


def _feature_error(exc: LaunchError, pin: FeaturePin) -> LaunchError:
    what = f"the Feature of {pin.tool}@{pin.version} ({pin.feature})"
    if exc.code == "image.blob_mismatch":
        return LaunchError(
            "compose.feature_mismatch",
            f"{what}: {exc.message}",
            hint="the registry serves other bytes than the catalog pinned; nothing ran",
        )
    if exc.code in ("image.unsafe_layer", "image.unsupported", "image.bad_manifest"):
        return LaunchError("compose.bad_feature", f"{what}: {exc.message}", hint=exc.hint)
    if exc.code.startswith("image."):
        return LaunchError("compose.feature_unavailable", f"{what}: {exc.message}", hint=exc.hint)
    return exc


def _order_fields(
    data: dict[str, Any], pin: FeaturePin
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    what = f"the Feature of {pin.tool}@{pin.version}"
    feature_id = data.get("id")
    depends = data.get("dependsOn", {})
    after = data.get("installsAfter", [])
    if not isinstance(depends, dict) or not all(isinstance(v, dict) for v in depends.values()):
        raise LaunchError("compose.bad_feature", f"{what}: dependsOn is not an object of options")
    if not isinstance(after, list) or not all(isinstance(x, str) for x in after):
        raise LaunchError("compose.bad_feature", f"{what}: installsAfter is not a list of ids")
    return (
        feature_id if isinstance(feature_id, str) else "",
        tuple(sorted(depends)),
        tuple(after),
    )


def _read_metadata(
    folder: Path, pin: FeaturePin
) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
    what = f"the Feature of {pin.tool}@{pin.version}"
    try:
        install = (folder / "install.sh").lstat()
        raw = (folder / METADATA).read_bytes()[: METADATA_LIMIT + 1]
        data = read_json(raw, limit=METADATA_LIMIT)
    except (OSError, JsonError) as exc:
        raise LaunchError(
            "compose.bad_feature",
            f"{what} has no readable {METADATA} and install.sh: {exc}",
            hint="a Feature's tarball holds devcontainer-feature.json and install.sh at its root",
        ) from None
    if not stat.S_ISREG(install.st_mode) or not isinstance(data, dict):
        raise LaunchError("compose.bad_feature", f"{what}: install.sh or {METADATA} is malformed")
    declared = data.get("options", {})
    if not isinstance(declared, dict):
        raise LaunchError("compose.bad_feature", f"{what}: options is not an object")
    unknown = sorted(set(pin.options) - set(declared))
    if unknown:
        raise LaunchError(
            "compose.bad_option",
            f"the catalog gives {what} options it does not declare: {', '.join(unknown)}",
            hint=f"declared options: {', '.join(sorted(declared)) or 'none'}",
        )
    env: dict[str, str] = {}
    for option, spec in sorted(declared.items()):
        default = spec.get("default") if isinstance(spec, dict) else None
        value = pin.options.get(option, default)
        if value is None:
            continue
        env[option_variable(option)] = str(value).lower() if isinstance(value, bool) else str(value)
    container = data.get("containerEnv", {})
    if not isinstance(container, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in container.items()
    ):
        raise LaunchError("compose.bad_feature", f"{what}: containerEnv is not strings")
    return env, dict(sorted(container.items())), data


__all__ = ["Feature", "fetch_feature", "option_variable"]
