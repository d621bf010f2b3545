"""What one image pull may cost, and the `[images]` table that changes it.

    [images]
    max_layers = 128            # layers in the manifest (Docker's own limit is 127)
    max_download_mib = 8192     # config and layers as the manifest declares them
    max_unpacked_mib = 16384    # everything the layers unpack to, sparse files at their size
    max_entry_mib = 4096        # one file in a layer
    max_entries = 1000000       # files, folders and links in all the layers
    pull_timeout = 1800         # seconds for the whole pull: fetching and unpacking

A pull over any of them fails with its own code (`image.too_many_layers`,
`image.too_large`, `image.pull_timeout`) before it fills the disk or holds a
launch for ever. Manifests and indexes (4 MiB, the distribution spec's own
limit) and the registry's token answers are bounded without a setting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.launch.core._errors import LaunchError

MiB = 1 << 20
MANIFEST_LIMIT = 4 * MiB


@dataclass(frozen=True)
class PullLimits:
    max_layers: int = 128
    max_download_bytes: int = 8192 * MiB
    max_unpacked_bytes: int = 16384 * MiB
    max_entry_bytes: int = 4096 * MiB
    max_entries: int = 1_000_000
    pull_timeout: float = 1800.0


# key: (field, bytes per unit, the default as the docs give it)
_KEYS: dict[str, tuple[str, int, str]] = {
    "max_layers": ("max_layers", 1, "128"),
    "max_download_mib": ("max_download_bytes", MiB, "8192"),
    "max_unpacked_mib": ("max_unpacked_bytes", MiB, "16384"),
    "max_entry_mib": ("max_entry_bytes", MiB, "4096"),
    "max_entries": ("max_entries", 1, "1000000"),
}
_MAX_COUNT = 1 << 40


def configured_limits(workspace: Path | str | None) -> PullLimits:
    """`[images]` of the workspace's configuration over the defaults
    (`config.invalid` for a value that is not a positive integer, or a
    timeout that is not a number of seconds from 1 to 604800)."""
    from flightdeck.config import ConfigError, load_config

    try:
        config = load_config(Path(workspace) if workspace is not None else None)
    except ConfigError as exc:
        raise LaunchError(exc.code, str(exc)) from None
    values: dict[str, Any] = {}
    for key, (field, unit, default) in _KEYS.items():
        value = config.get(f"images.{key}")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_COUNT:
            _invalid(config, key, "a positive integer", value, default)
        values[field] = value * unit
    timeout = config.get("images.pull_timeout")
    if timeout is not None:
        number = isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
        if not number or not math.isfinite(timeout) or not 1 <= timeout <= 604800:
            _invalid(config, "pull_timeout", "seconds from 1 to 604800", timeout, "1800")
        values["pull_timeout"] = float(timeout)
    return PullLimits(**values)


def _invalid(config: Any, key: str, wanted: str, got: Any, default: str) -> None:
    where = ", ".join(str(path) for path in config.sources) or "the configuration"
    raise LaunchError(
        "config.invalid",
        f"[images] {key} must be {wanted}, got {got!r} (in {where})",
        hint=f"fix or remove [images] {key}; the default is {default}",
    )


__all__ = ["MANIFEST_LIMIT", "MiB", "PullLimits", "configured_limits"]
