"""Where flightdeck keeps things, and the TOML configuration it reads.

`FLIGHTDECK_HOME` overrides both the user config dir and the user data dir
(tests point it at a temporary directory).
"""

from flightdeck.config._files import Config, ConfigError, load_config
from flightdeck.config._paths import config_dir, data_dir

__all__ = ["Config", "ConfigError", "config_dir", "data_dir", "load_config"]
