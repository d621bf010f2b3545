"""Where an installed plan's image is pulled from: its origin registry.

`flightdeck install` writes `origin.json` (registry, repository, tag, the
artifact's digest) inside the version folder, and publish copied the image
into that repository by digest. So launch of an installed version pulls
`<origin registry>/<origin repository>@<digest the signed lock pins>`: the
origin chooses only where the bytes come from; the pull refuses any that
are not the pinned digest (`image.blob_mismatch`), as for every image. A
version frozen here has no origin.json and pulls from the image's own
registry, as before. A composed image (issue 32) has no registry of its
own: publish copied it from the image cache into the same repository, so an
installed one is pulled from the origin too (the lock's `ref` still names
its base, which the audit and `--dry-run` show).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.flightplan import FlightPlan, FlightPlanError, parse_image_ref
from flightdeck.launch.core._errors import LaunchError

ORIGIN_FILE = "origin.json"
_LIMIT = 64 << 10


def from_origin(plan: FlightPlan, skill: Path) -> FlightPlan:
    """The plan with its pinned image read from the origin registry, when
    the version was installed; else the plan unchanged."""
    lock = plan.lock
    path = skill.parent / ORIGIN_FILE
    if lock is None or not lock.resolved_images or not (path.exists() or path.is_symlink()):
        return plan
    image = lock.resolved_images[0]
    digest = image.digest.rpartition("@")[2]
    try:
        data = read_json(read_regular(path, _LIMIT).decode("utf-8"))
        registry, repository = data["registry"], data["repository"]
        if not (isinstance(registry, str) and isinstance(repository, str)):
            raise TypeError("registry and repository must be strings")
        parse_image_ref(f"{registry}/{repository}@{digest}")
    except (OSError, ValueError, KeyError, TypeError, FlightPlanError) as exc:
        detail = exc.message if isinstance(exc, FlightPlanError) else str(exc)
        raise LaunchError(
            "image.origin_unreadable",
            f"{path} does not say where the image comes from: {detail}",
            hint="install the plan again (flightdeck install HOST/REPO:TAG)",
        ) from None
    if image.features:  # composed: `ref` stays the base it was composed on
        moved = replace(image, source=f"{registry}/{repository}", digest=digest)
    else:
        moved = replace(image, ref=f"{registry}/{repository}", digest=digest)
    return replace(plan, lock=replace(lock, resolved_images=(moved, *lock.resolved_images[1:])))


__all__ = ["ORIGIN_FILE", "from_origin"]
