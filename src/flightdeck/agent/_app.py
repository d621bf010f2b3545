"""Start an agent session from flags, environment and config: the library
side of `flightdeck agent`, where the app wires a transport to the engine and
the extensions (`run_json_stream`: the JSON stream; the terminal chat and ACP
start theirs from `start` and `engine/_setup.py`). Every start-up failure is
a `SetupError` that the JSON-stream mode reports as an `error` event with
`config_error`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from flightdeck.agent.engine._session import AgentSession, Emit
from flightdeck.agent.engine._setup import Setup, prepare
from flightdeck.agent.engine._setup import SetupError as SetupError
from flightdeck.agent.engine._setup import load_settings as load_settings
from flightdeck.agent.engine._setup import make_provider as make_provider
from flightdeck.agent.engine._setup import open_session as open_session
from flightdeck.agent.engine._setup import sessions_root as sessions_root
from flightdeck.agent.stream._early import probe_bubblewrap

if TYPE_CHECKING:
    from flightdeck.agent.stream._early import Early


class Started(msgspec.Struct):
    session: AgentSession
    problems: list[str] = msgspec.field(default_factory=list)


def start(flags: Mapping[str, Any], emit: Emit, env: Mapping[str, str] | None = None) -> Started:
    """Build a ready-to-run session. Raises `SetupError`."""
    return engine_session(prepare(flags, os.environ if env is None else env), emit)


def engine_session(setup: Setup, emit: Emit) -> Started:
    """The engine's session for what start-up prepared (cannot fail)."""
    env = setup.env
    agent = AgentSession(
        setup.settings,
        setup.provider,
        emit,
        session=setup.session,
        loaded=setup.loaded,
        provider_factory=lambda changed: make_provider(changed, env)[0],
    )
    return Started(agent, setup.problems())


def _sandbox_state(session: AgentSession) -> tuple[str, str | None]:
    from flightdeck.agent.tools import sandbox_state

    return sandbox_state(session.settings.sandbox)


async def run_json_stream(
    flags: Mapping[str, Any],
    stdin: BinaryIO,
    stdout: BinaryIO,
    env: Mapping[str, str] | None = None,
    *,
    early: Early | None = None,
) -> int:
    """`flightdeck agent --json-stream`: returns the exit code. `early`: what
    `stream/_early.py`'s `early_ready` did before the engine was imported (its `ready` line
    is then already written, or its setup error is reported here)."""
    from flightdeck.agent.protocol import _models as p
    from flightdeck.agent.stream._lines import read_lines, sigterm_hook
    from flightdeck.agent.stream._transport import LineWriter, serve

    writer = LineWriter(stdout)
    # Finding a working bubblewrap spawns a process; it runs beside start-up.
    import asyncio

    probe = None
    if early is None:
        probe = asyncio.get_running_loop().run_in_executor(None, probe_bubblewrap)
    try:
        if early is not None and early.error is not None:
            raise early.error
        if early is not None and early.setup is not None:
            started = engine_session(early.setup, writer)
        else:
            started = start(flags, writer, env)
    except SetupError as exc:
        info = p.ErrorInfo(code="config_error", message=str(exc), retryable=False)
        writer(p.ErrorEvent(msg_id=None, error=info))
        writer.flush()
        print(f"flightdeck agent: {exc}", file=sys.stderr)
        return 1
    session = started.session
    from flightdeck.agent.extensions._load import attach_extensions

    extensions = await attach_extensions(session)  # MCP, manifest tools, Spawn
    ready = extensions.decorate(session.ready_event())
    if probe is not None:
        await probe
    sandbox, notice = _sandbox_state(session)
    caps = msgspec.structs.replace(ready.capabilities, sandbox=sandbox)
    ready = msgspec.structs.replace(ready, capabilities=caps)
    if early is None:
        writer(ready)
    elif p.encode_event(ready) != early.ready:  # a bug: tests pin them equal
        print("flightdeck agent: internal: the early ready line differs", file=sys.stderr)
    if notice is not None:
        writer(p.InfoEvent(msg_id=None, message=notice))
    for problem in [*started.problems, *extensions.problems]:
        writer(p.InfoEvent(msg_id=None, message=problem))
    # `ready` leaves first; then the provider's SDK imports in the background
    # so the first reply does not wait for it (flightdeck.llm.warm). A plain
    # start began that already, right after its early `ready`.
    writer.flush()
    from flightdeck.agent._startup import resume_gc

    resume_gc()
    if early is None:
        from flightdeck.llm import warm

        warm(session.provider)
    session.resume_pending()  # approvals awaited when the process ended are asked again
    stop_hook = sigterm_hook if early is None else early.on_stop_signal(sigterm_hook)
    try:
        await serve(session, read_lines(stdin), on_stop_signal=stop_hook)
    finally:
        await extensions.close()
        writer.flush()
    return 0
