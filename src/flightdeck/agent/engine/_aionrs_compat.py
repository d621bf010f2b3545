"""`<workspace>/.aionrs.toml`: the provider settings AionUi writes for aionrs.

AionUi writes `[providers.openai.compat]` into the workspace before it starts
the agent (for the official OpenAI host, `max_tokens_field =
"max_completion_tokens"`). Two of aionrs's compat keys mean something to
flightdeck and are mapped to `[providers.openai]` options: `max_tokens_field`
and `api_path`. A value set in flightdeck's own configuration wins; every
other key is ignored (named in an `info`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

FILE = ".aionrs.toml"
MAPPED = ("max_tokens_field", "api_path")


def read_compat(workspace: Path) -> tuple[dict[str, str], list[str]]:
    """The mapped `[providers.openai.compat]` options, and problems to report."""
    path = workspace / FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: ignored, cannot be read: {exc}"]
    import tomllib  # only when AionUi wrote the file

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return {}, [f"{path}: ignored, cannot be read: {exc}"]
    compat = _table(_table(_table(data, "providers"), "openai"), "compat")
    options = {k: v for k, v in compat.items() if k in MAPPED and isinstance(v, str)}
    ignored = sorted(k for k in compat if k not in options)
    problems = (
        [f"{path}: [providers.openai.compat] {', '.join(ignored)} ignored"] if ignored else []
    )
    return options, problems


def merge(config: Mapping[str, Any], options: Mapping[str, str]) -> dict[str, Any]:
    """`config` with `options` under `[providers.openai]` where it sets none."""
    merged = dict(config)
    providers = dict(_table(merged, "providers"))
    openai = dict(_table(providers, "openai"))
    for key, value in options.items():
        openai.setdefault(key, value)
    providers["openai"] = openai
    merged["providers"] = providers
    return merged


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}
