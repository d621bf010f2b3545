"""Where flightdeck keeps things, and the TOML configuration it reads.

`FLIGHTDECK_HOME` overrides both the user config dir and the user data dir
(tests point it at a temporary directory).
"""

from typing import TYPE_CHECKING, Any

from flightdeck.config._database import ENV as DATABASE_ENV
from flightdeck.config._database import StoreError, mask_url, store_url
from flightdeck.config._files import Config, ConfigError, load_config, merge_layers
from flightdeck.config._paths import config_dir, data_dir
from flightdeck.config._screen import Screened, key_name, screen
from flightdeck.config._trust import UNTRUSTED, Trust, decide_trust, set_trust, trust_notice
from flightdeck.config._workspace import find_workspace

if TYPE_CHECKING:
    from flightdeck.config._explain import (
        ENVIRONMENT,
        ConfigPaths,
        Setting,
        config_paths,
        explain_config,
    )
    from flightdeck.config._sqlite import migrate_sqlite, statements

_EXPLAIN = {"ENVIRONMENT", "ConfigPaths", "Setting", "config_paths", "explain_config"}
_SQLITE = {"migrate_sqlite", "statements"}


def __getattr__(name: str) -> Any:
    # `config show` alone needs these, and the SQLite stores the others:
    # imported on first use (PEP 562).
    if name in _EXPLAIN:
        from flightdeck.config import _explain

        return getattr(_explain, name)
    if name in _SQLITE:
        from flightdeck.config import _sqlite

        return getattr(_sqlite, name)
    raise AttributeError(f"module 'flightdeck.config' has no attribute {name!r}")


__all__ = [
    "DATABASE_ENV",
    "ENVIRONMENT",
    "UNTRUSTED",
    "Config",
    "ConfigError",
    "ConfigPaths",
    "Screened",
    "Setting",
    "StoreError",
    "Trust",
    "config_dir",
    "config_paths",
    "data_dir",
    "decide_trust",
    "explain_config",
    "find_workspace",
    "key_name",
    "load_config",
    "mask_url",
    "merge_layers",
    "migrate_sqlite",
    "screen",
    "set_trust",
    "statements",
    "store_url",
    "trust_notice",
]
