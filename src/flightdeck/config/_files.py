"""Layered TOML configuration: user `config.toml`, then the workspace's
`flightdeck.toml`. Later layers win key by key (tables merge recursively).
Command-line flags and environment variables are applied by the caller on
top, so precedence is CLI > env > project > user.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from flightdeck._errors import FlightdeckError
from flightdeck.config._paths import config_dir

PROJECT_FILE = "flightdeck.toml"


class Config(msgspec.Struct, frozen=True):
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    sources: tuple[Path, ...] = ()
    # The workspace file's own data, before merging: what it alone names
    # (its MCP servers need the user's trust, `_trust.py`).
    project: dict[str, Any] = msgspec.field(default_factory=dict)
    # The user's own file's data: what an untrusted workspace's settings are
    # judged against (`_screen.py`).
    user: dict[str, Any] = msgspec.field(default_factory=dict)

    def get(self, dotted: str, default: Any = None) -> Any:
        """Look up `a.b.c`; `default` when any part is missing."""
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node


class ConfigError(FlightdeckError):
    """A config file exists but cannot be read (`config.unreadable`: a folder,
    a broken link, a home that is a file) or is not valid TOML (`config.invalid`)."""

    fields = ("code", "message", "file")
    __str__ = Exception.__str__  # "PATH: MESSAGE", from args

    def __init__(self, path: Path, message: str, code: str = "config.invalid") -> None:
        super().__init__(code, message)
        # str() and args name the file too; `message` alone is the TOML reader's.
        self.args = (f"{path}: {message}",)
        self.path = path

    def heading(self) -> str:
        return f"{self.path}: {self.message}"

    def field_value(self, name: str) -> Any:
        return str(self.path) if name == "file" else super().field_value(name)


def merge_layers(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """`top` over `base`, key by key (tables merge recursively)."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge_layers(out[key], value)
        else:
            out[key] = value
    return out


def _read(path: Path) -> dict[str, Any] | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a directory, a home that is a file, no permission
        raise ConfigError(path, f"cannot read: {exc.strerror}", "config.unreadable") from None
    import tomllib  # only when there is a file: ~4 ms of every agent start without one

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(path, str(exc)) from None
    except RecursionError:  # tomllib recurses once per nesting level
        raise ConfigError(path, "nested too deep to read") from None


def load_config(workspace: Path | None = None) -> Config:
    """Read the user config then `<workspace>/flightdeck.toml`. Raises `ConfigError`."""
    data: dict[str, Any] = {}
    sources: list[Path] = []
    project: dict[str, Any] = {}
    user: dict[str, Any] = {}
    candidates = [config_dir() / "config.toml"]
    if workspace is not None:
        candidates.append(workspace / PROJECT_FILE)
    for path in candidates:
        layer = _read(path)
        if layer is not None:
            data = merge_layers(data, layer)
            sources.append(path)
            if workspace is not None and path == workspace / PROJECT_FILE:
                project = layer
            else:
                user = layer
    return Config(data, tuple(sources), project, user)
