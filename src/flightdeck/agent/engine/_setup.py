"""The steps of an agent's start-up that can fail: settings from flags,
environment and config, the provider, the session on disk. Each failure is a
`SetupError`, reported as an `error` event with `config_error` (JSON stream).

Nothing here imports pydantic, asyncio or the engine: `agent --json-stream`
runs these same steps before `ready` with the standard library and msgspec
(its classes are Structs: agent/stream/_early.py), and the engine continues with what they produced.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from flightdeck.agent.engine._aionrs_compat import FILE, merge, read_compat
from flightdeck.agent.engine._settings import AgentSettings, SettingsError, resolve_settings
from flightdeck.agent.engine._store import Loaded, Session, SessionError, SessionStore

if TYPE_CHECKING:
    from flightdeck.config import Config
    from flightdeck.llm import Provider

__all__ = [
    "Setup",
    "SetupError",
    "load_settings",
    "make_provider",
    "open_session",
    "prepare",
    "sessions_root",
    "settings_data",
    "with_model",
]


class SetupError(Exception):
    """The agent cannot start (reported as `config_error`, non-zero exit)."""


def sessions_root() -> Path:
    from flightdeck.config import data_dir

    return data_dir() / "sessions"


def load_settings(flags: Mapping[str, Any], env: Mapping[str, str]) -> AgentSettings:
    from flightdeck.config import ConfigError, load_config

    workspace = Path(flags.get("workspace") or ".").resolve()
    if not workspace.is_dir():
        raise SetupError(f"workspace {workspace} is not a directory")
    try:
        config = load_config(workspace)
        data, ignored = settings_data(config, workspace, host=flags.get("trust_workspace") is True)
        settings = resolve_settings({**flags, "workspace": str(workspace)}, env, data)
    except (ConfigError, SettingsError) as exc:
        raise SetupError(str(exc)) from None
    return msgspec.structs.replace(settings, ignored_settings=ignored) if ignored else settings


def settings_data(
    config: Config, workspace: Path, *, host: bool
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The configuration the settings are read from, and the keys of the
    workspace's files (`flightdeck.toml`, AionUi's `.aionrs.toml`) ignored
    because the user does not trust it: an untrusted workspace sets only
    what config/_screen.py lets it, judged against the user's own file.
    Trust is asked (`decide_trust`) only when a file sets more than
    harmless keys. `host`: the host trusts it (`--trust-workspace`)."""
    from flightdeck.config import decide_trust, key_name, merge_layers, screen

    # AionUi's provider options, below both files (`_aionrs_compat.merge`).
    options = read_compat(workspace)[0] if (workspace / FILE).is_file() else {}
    own = screen(config.project, config.user)
    compat = screen({"providers": {"openai": options}}, config.user)
    data: dict[str, Any] = config.data
    ignored: tuple[str, ...] = ()
    if (own.guarded or compat.guarded) and not decide_trust(workspace, host=host).trusted:
        data = merge_layers(config.user, own.layer)
        options = compat.layer["providers"]["openai"]
        aionrs = (f"[providers.openai.compat] {path[-1]} ({FILE})" for path in compat.ignored)
        ignored = (*map(key_name, own.ignored), *aionrs)
    return (merge(data, options) if options else data), ignored


def make_provider(settings: AgentSettings, env: Mapping[str, str]) -> tuple[Provider, str]:
    """The provider and the model it will use. No SDK is imported here."""
    from flightdeck import llm
    from flightdeck.llm import ProviderError

    try:
        model = settings.model or llm.default_model(settings.provider)
        provider = llm.create_provider(
            settings.provider,
            model=model,
            base_url=settings.base_url,
            options=settings.provider_options or None,
            env=dict(env),
        )
    except ProviderError as exc:
        raise SetupError(exc.message) from None
    return provider, model


def open_session(
    settings: AgentSettings, session_id: str | None, resume: str | None, model: str
) -> tuple[Session | None, Loaded]:
    if session_id and resume:
        raise SetupError("--session-id and --resume cannot be used together")
    if not settings.sessions:
        if session_id or resume:
            raise SetupError("sessions are disabled in the configuration ([agent] sessions)")
        return None, Loaded()
    store = SessionStore(sessions_root())
    meta = {"provider": settings.provider, "model": model, "workspace": str(settings.workspace)}
    try:
        if resume:
            try:
                session = store.open(resume)
            except SessionError as exc:
                # AionUi resumes by its conversation id and, when that fails,
                # starts again with --session-id: do that here, with an info.
                fresh = None if resume == "latest" else resume
                loaded = Loaded()
                loaded.problems.append(f"{exc}; starting it as a new session")
                return store.create(fresh, **meta), loaded
            return session, session.load(repair=True)
        return store.create(session_id, **meta), Loaded()
    except SessionError as exc:
        raise SetupError(str(exc)) from None
    except OSError as exc:  # the data dir is a file, no permission, a full disk
        where = f": {exc.filename}" if exc.filename else ""
        raise SetupError(
            f"cannot use the session store {store.root}: {exc.strerror or exc}{where}"
        ) from None


def with_model(settings: AgentSettings, model: str) -> AgentSettings:
    return msgspec.structs.replace(settings, model=model)


class Setup(msgspec.Struct):
    """What start-up produced before the engine: settings (with the model
    resolved), the provider, and the session with what it loaded."""

    settings: AgentSettings
    provider: Provider
    session: Session | None
    loaded: Loaded = msgspec.field(default_factory=Loaded)
    env: Mapping[str, str] = msgspec.field(default_factory=dict)

    def problems(self) -> list[str]:
        """The `info` lines after `ready`: the AionUi compat file's, the
        resumed session's."""
        return [*read_compat(self.settings.workspace)[1], *self.loaded.problems]


def prepare(flags: Mapping[str, Any], env: Mapping[str, str]) -> Setup:
    """Every start-up step that can fail, in order. Raises `SetupError`."""
    settings = load_settings(flags, env)
    provider, model = make_provider(settings, env)
    settings = with_model(settings, model)
    session, loaded = open_session(settings, flags.get("session_id"), flags.get("resume"), model)
    return Setup(settings, provider, session, loaded, env)
