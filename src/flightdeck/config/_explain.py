"""Where each setting comes from: `flightdeck config show`.

The configuration files merge key by key (`load_config`); this module keeps,
for every leaf value, the file that set it last, and lists the FLIGHTDECK_*
environment variables that change behaviour. Secret-bearing variables are
shown by name only: `config show` output gets pasted into bug reports.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.config._database import mask_url
from flightdeck.config._files import PROJECT_FILE, _read
from flightdeck.config._paths import config_dir, data_dir

# The variables flightdeck reads, and what each does (docs/decisions.md lists them too).
ENVIRONMENT: dict[str, str] = {
    "FLIGHTDECK_HOME": "one folder for config/ and data/ (overrides the platform dirs)",
    "FLIGHTDECK_LIBRARY_PATH": "action and driver libraries, os.pathsep separated",
    "FLIGHTDECK_PROVIDER": "the agent's LLM provider",
    "FLIGHTDECK_LLM_PROVIDER": "the LLM provider of Flight Plan llm-seam steps",
    "FLIGHTDECK_LLM_MODEL": "the model of llm-seam steps",
    "FLIGHTDECK_LLM_BASE_URL": "the provider base URL of llm-seam steps",
    "FLIGHTDECK_SIGNING_KEY": "the private key freeze signs with (a path or PEM text)",
    "FLIGHTDECK_KEY_PASSPHRASE": "the passphrase of an encrypted private key",
    "FLIGHTDECK_DATABASE_URL": "the PostgreSQL store (over [store] url); unset: SQLite files",
}
# Values shown with their password masked: a URL is worth seeing, its secret is not.
_URLS = frozenset({"store.url", "FLIGHTDECK_DATABASE_URL"})
_SECRET_WORDS = frozenset({"key", "passphrase", "secret", "token", "credential", "password"})


@dataclass(frozen=True)
class Setting:
    key: str  # dotted, e.g. agent.sandbox.mode; for the environment, the variable name
    value: Any  # None for a secret shown by name only
    source: str  # a file path, or "environment"
    secret: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "source": self.source, "secret": self.secret}


@dataclass(frozen=True)
class ConfigPaths:
    config_dir: Path
    data_dir: Path
    user_file: Path
    project_file: Path | None  # None outside a workspace

    def to_dict(self) -> dict[str, Any]:
        return {
            "config_dir": str(self.config_dir),
            "data_dir": str(self.data_dir),
            "user_file": str(self.user_file),
            "user_file_exists": self.user_file.is_file(),
            "project_file": str(self.project_file) if self.project_file else None,
            "project_file_exists": bool(self.project_file and self.project_file.is_file()),
        }


def config_paths(workspace: Path | None) -> ConfigPaths:
    project = workspace / PROJECT_FILE if workspace is not None else None
    return ConfigPaths(config_dir(), data_dir(), config_dir() / "config.toml", project)


def _leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, dotted + ".")
        else:
            yield dotted, value


def _secret_name(name: str) -> bool:
    # Whole words only: `api_key` and FLIGHTDECK_SECRET_X are secret, `max_tokens` is not.
    return any(part in _SECRET_WORDS for part in re.split(r"[_.\-]", name.lower()))


def explain_config(
    workspace: Path | None, environ: Mapping[str, str] | None = None
) -> list[Setting]:
    """Every effective file setting with the file that set it, then the
    environment. Raises `ConfigError` like `load_config`."""
    paths = config_paths(workspace)
    chosen: dict[str, Setting] = {}
    for path in (paths.user_file, paths.project_file):
        if path is None:
            continue
        layer = _read(path)
        if layer is None:
            continue
        for key, value in _leaves(layer):
            # A later table replaces an earlier scalar at the same key, and the
            # reverse; drop what the new leaf shadows.
            for old in [k for k in chosen if k.startswith(key + ".") or key.startswith(k + ".")]:
                del chosen[old]
            secret = _secret_name(key.rsplit(".", 1)[-1])
            if key in _URLS and isinstance(value, str):
                value = mask_url(value)
            chosen[key] = Setting(key, None if secret else value, str(path), secret)
    env = os.environ if environ is None else environ
    out = [chosen[key] for key in sorted(chosen)]
    for name in sorted(env):
        if name in ENVIRONMENT or name.startswith("FLIGHTDECK_SECRET_"):
            secret = _secret_name(name)
            value = mask_url(env[name]) if name in _URLS else env[name]
            out.append(Setting(name, None if secret else value, "environment", secret))
    return out
