"""Where flightdeck keeps things, and the TOML configuration it reads.

`FLIGHTDECK_HOME` overrides both the user config dir and the user data dir
(tests point it at a temporary directory).
"""

from flightdeck.config._files import Config, ConfigError, load_config
from flightdeck.config._paths import config_dir, data_dir
from flightdeck.config._workspace import find_workspace

__all__ = ["Config", "ConfigError", "config_dir", "data_dir", "find_workspace", "load_config"]
