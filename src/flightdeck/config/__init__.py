"""Where flightdeck keeps things, and the TOML configuration it reads.

`FLIGHTDECK_HOME` overrides both the user config dir and the user data dir
(tests point it at a temporary directory).
"""

from flightdeck.config._explain import (
    ENVIRONMENT,
    ConfigPaths,
    Setting,
    config_paths,
    explain_config,
)
from flightdeck.config._files import Config, ConfigError, load_config
from flightdeck.config._paths import config_dir, data_dir
from flightdeck.config._workspace import find_workspace

__all__ = [
    "ENVIRONMENT",
    "Config",
    "ConfigError",
    "ConfigPaths",
    "Setting",
    "config_dir",
    "config_paths",
    "data_dir",
    "explain_config",
    "find_workspace",
    "load_config",
]
