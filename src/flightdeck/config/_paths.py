"""User directories, resolved at call time (never at import)."""

from __future__ import annotations

import os
from pathlib import Path


def _home_override() -> Path | None:
    home = os.environ.get("FLIGHTDECK_HOME")
    return Path(home) if home else None


def config_dir() -> Path:
    """Directory of the user's `config.toml`."""
    home = _home_override()
    if home:
        return home / "config"
    import platformdirs  # ~7 ms, not needed when FLIGHTDECK_HOME says where

    return Path(platformdirs.user_config_dir("flightdeck"))


def data_dir() -> Path:
    """Directory for stores: audit, runs, sessions, frozen skills, keyring."""
    home = _home_override()
    if home:
        return home / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir("flightdeck"))
