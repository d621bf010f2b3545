"""`catalog add`: a Feature from a registry reference, pinned by digest.

The reference's tag is resolved to the digest it names now, and the catalog
keeps both (`repo:tag@sha256:…`), so composition can later tell a moved tag
(`compose.feature_tag_moved`). The Feature is fetched and read the way
composition reads it before anything is written: a Feature composition
would refuse (`compose.bad_feature`, `compose.bad_option`, a digest that
does not match) never enters the catalog.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from flightdeck.flightplan import FeaturePin, OciResolver, parse_image_ref
from flightdeck.flightplan.model._features import add_feature
from flightdeck.launch.compose._feature import fetch_feature
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
    add_feature(path, pinned, runner_base=base)
    return {"feature": pinned.feature, "options": dict(pinned.options), "runner_base": base}


__all__ = ["pin_feature"]
