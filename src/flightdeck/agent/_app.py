"""Start an agent session from flags, environment and config: the library
side of `flightdeck agent`. Every start-up failure is a `SetupError` that the
JSON-stream mode reports as an `error` event with `config_error`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from flightdeck.agent._aionrs_compat import FILE, merge, read_compat
from flightdeck.agent._engine import AgentSession, Emit
from flightdeck.agent._settings import AgentSettings, SettingsError, resolve_settings
from flightdeck.agent._store import Loaded, Session, SessionError, SessionStore
from flightdeck.llm import Provider, ProviderError


class SetupError(Exception):
    """The agent cannot start (reported as `config_error`, non-zero exit)."""


@dataclass
class Started:
    session: AgentSession
    problems: list[str] = field(default_factory=list)


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
        data: Mapping[str, Any] = config.data
        if (workspace / FILE).is_file():  # AionUi's provider compat settings
            data = merge(data, read_compat(workspace)[0])
        return resolve_settings({**flags, "workspace": str(workspace)}, env, data)
    except (ConfigError, SettingsError) as exc:
        raise SetupError(str(exc)) from None


def make_provider(settings: AgentSettings, env: Mapping[str, str]) -> tuple[Provider, str]:
    """The provider and the model it will use. No SDK is imported here."""
    from flightdeck import llm

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


def start(flags: Mapping[str, Any], emit: Emit, env: Mapping[str, str] | None = None) -> Started:
    """Build a ready-to-run session. Raises `SetupError`."""
    env = os.environ if env is None else env
    settings = load_settings(flags, env)
    provider, model = make_provider(settings, env)
    settings = _with_model(settings, model)
    session, loaded = open_session(settings, flags.get("session_id"), flags.get("resume"), model)
    agent = AgentSession(
        settings,
        provider,
        emit,
        session=session,
        loaded=loaded,
        provider_factory=lambda changed: make_provider(changed, env)[0],
    )
    compat_problems = read_compat(settings.workspace)[1]
    return Started(agent, [*compat_problems, *loaded.problems])


def _probe_bubblewrap() -> None:
    from flightdeck.guard import bwrap_path

    bwrap_path()  # cached: the answer is read again by `_sandbox_state`


def _sandbox_state(session: AgentSession) -> tuple[str, str | None]:
    from flightdeck.agent.tools import sandbox_state

    return sandbox_state(session.settings.sandbox)


def _with_model(settings: AgentSettings, model: str) -> AgentSettings:
    from dataclasses import replace

    return replace(settings, model=model)


async def run_json_stream(
    flags: Mapping[str, Any],
    stdin: BinaryIO,
    stdout: BinaryIO,
    env: Mapping[str, str] | None = None,
) -> int:
    """`flightdeck agent --json-stream`: returns the exit code."""
    from flightdeck.agent import _protocol as p
    from flightdeck.agent._lines import read_lines, sigterm_hook
    from flightdeck.agent._transport import LineWriter, serve

    writer = LineWriter(stdout)
    # Finding a working bubblewrap spawns a process; it runs beside start-up.
    import asyncio

    probe = asyncio.get_running_loop().run_in_executor(None, _probe_bubblewrap)
    try:
        started = start(flags, writer, env)
    except SetupError as exc:
        info = p.ErrorInfo(code="config_error", message=str(exc), retryable=False)
        writer(p.ErrorEvent(msg_id=None, error=info))
        writer.flush()
        print(f"flightdeck agent: {exc}", file=sys.stderr)
        return 1
    session = started.session
    from flightdeck.agent._extensions import attach_extensions

    extensions = await attach_extensions(session)  # MCP, manifest tools, Spawn
    ready = extensions.decorate(session.ready_event())
    await probe
    sandbox, notice = _sandbox_state(session)
    caps = ready.capabilities.model_copy(update={"sandbox": sandbox})
    writer(ready.model_copy(update={"capabilities": caps}))
    if notice is not None:
        writer(p.InfoEvent(msg_id=None, message=notice))
    for problem in [*started.problems, *extensions.problems]:
        writer(p.InfoEvent(msg_id=None, message=problem))
    # `ready` leaves first; then the provider's SDK imports in the background
    # so the first reply does not wait for it (flightdeck.llm.warm).
    writer.flush()
    from flightdeck.agent._startup import resume_gc
    from flightdeck.llm import warm

    resume_gc()
    warm(session.provider)
    session.resume_pending()  # approvals awaited when the process ended are asked again
    try:
        await serve(session, read_lines(stdin), on_stop_signal=sigterm_hook)
    finally:
        await extensions.close()
        writer.flush()
    return 0
