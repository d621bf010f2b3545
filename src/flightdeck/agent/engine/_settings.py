"""The agent's settings, resolved from flags, environment and config files.

Precedence is CLI > environment > project `flightdeck.toml` > user
`config.toml`; an untrusted workspace's `flightdeck.toml` sets only what
config/_screen.py lets it (`_setup.load_settings` screens it first).
Keys (all optional) under `[agent]`: provider, model, max_tokens,
max_turns, system_prompt, thinking_budget, allow_list, mode, sessions,
max_retries, retry_delay, context_window (tokens; enables compaction, see
`_compaction.py`), sandbox (a mode, or the `[agent.sandbox]` table of
`tools/_sandbox.py`). `[providers.<name>] base_url` sets a provider's
endpoint. `[mcp.servers.*]` is read by the extension loader.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast

import msgspec

# From the module, not the package's lazy names: `agent --json-stream` resolves
# its settings before `ready` with the standard library and msgspec (agent/stream/_early.py).
from flightdeck.agent.tools._sandbox import SandboxConfigError, SandboxSettings, parse_sandbox

Mode = Literal["default", "auto_edit", "yolo"]
MODES: tuple[Mode, ...] = ("default", "auto_edit", "yolo")
PROVIDERS = ("anthropic", "openai", "bedrock", "vertex", "local")
BASE_URL_ENV = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "local": "FLIGHTDECK_LOCAL_BASE_URL",
}
# Providers whose requests carry a reasoning effort, and its levels (`set_config`).
EFFORT_LEVELS: dict[str, tuple[str, ...]] = {"openai": ("low", "medium", "high")}

DEFAULT_SYSTEM_PROMPT = (
    "You are flightdeck, a coding agent working in the directory {workspace}. "
    "Use the tools to read, search, edit files and run commands there; paths outside "
    "it are refused. Read a file before editing it. Be concise."
)


class SettingsError(Exception):
    """A configuration value is missing or invalid (reported as `config_error`)."""


class AgentSettings(msgspec.Struct, frozen=True):
    workspace: Path
    provider: str = "anthropic"
    model: str | None = None
    base_url: str | None = None
    max_tokens: int = 8192
    max_turns: int = 30
    system_prompt: str | None = None
    thinking_budget: int | None = None
    mode: Mode = "default"
    allow_list: tuple[str, ...] = ()
    sessions: bool = True
    max_retries: int = 2
    retry_delay: float = 1.0
    provider_options: dict[str, Any] = msgspec.field(default_factory=dict)
    context_window: int | None = None
    sandbox: SandboxSettings = msgspec.field(default_factory=SandboxSettings)
    # The host trusts the workspace's own commands (`--trust-workspace`):
    # from the command line only, never from a config file a workspace holds.
    trust_workspace: bool = False
    # The keys of the workspace's files ignored because it is not trusted
    # (config/_screen.py), for the notice that says so (`_setup.load_settings`).
    ignored_settings: tuple[str, ...] = ()

    def system(self) -> str:
        if self.system_prompt is not None:
            return self.system_prompt
        return DEFAULT_SYSTEM_PROMPT.format(workspace=self.workspace)


def _int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingsError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _optional_int(value: Any, name: str, minimum: int) -> int | None:
    return None if value is None else _int(value, name, minimum)


def resolve_settings(
    flags: Mapping[str, Any], env: Mapping[str, str], config: Mapping[str, Any]
) -> AgentSettings:
    """Combine flags (None = not given), environment and merged config data."""
    agent = config.get("agent", {})
    if not isinstance(agent, Mapping):
        raise SettingsError("[agent] must be a table")

    def pick(name: str, default: Any = None) -> Any:
        value = flags.get(name)
        return value if value is not None else agent.get(name, default)

    provider = flags.get("provider") or env.get("FLIGHTDECK_PROVIDER") or agent.get("provider")
    provider = provider or "anthropic"
    if provider not in PROVIDERS:
        raise SettingsError(f"unknown provider {provider!r} (expected {', '.join(PROVIDERS)})")
    providers = config.get("providers", {})
    section = providers.get(provider, {}) if isinstance(providers, Mapping) else {}
    if not isinstance(section, Mapping):
        raise SettingsError(f"[providers.{provider}] must be a table")
    env_url = env.get(BASE_URL_ENV.get(provider, ""), "") or None
    base_url = flags.get("base_url") or env_url or section.get("base_url")
    mode = "yolo" if flags.get("auto_approve") else agent.get("mode", "default")
    if mode not in MODES:
        raise SettingsError(f"[agent] mode must be one of {', '.join(MODES)}")
    allow = agent.get("allow_list", [])
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise SettingsError("[agent] allow_list must be a list of tool names or categories")
    thinking = pick("thinking_budget")
    options = {k: v for k, v in section.items() if k != "base_url"}
    try:
        sandbox = parse_sandbox(agent.get("sandbox"))
    except SandboxConfigError as exc:
        raise SettingsError(str(exc)) from None
    return AgentSettings(
        workspace=Path(flags.get("workspace") or ".").resolve(),
        provider=provider,
        model=pick("model"),
        base_url=base_url,
        max_tokens=_int(pick("max_tokens", 8192), "max_tokens"),
        max_turns=_int(pick("max_turns", 30), "max_turns"),
        system_prompt=pick("system_prompt"),
        thinking_budget=None if thinking is None else _int(thinking, "thinking_budget", 1024),
        mode=cast(Mode, mode),
        allow_list=tuple(allow),
        sessions=bool(agent.get("sessions", True)),
        max_retries=_int(agent.get("max_retries", 2), "max_retries", 0),
        retry_delay=float(agent.get("retry_delay", 1.0)),
        provider_options=options,
        context_window=_optional_int(agent.get("context_window"), "context_window", 1024),
        sandbox=sandbox,
        trust_workspace=flags.get("trust_workspace") is True,
    )
