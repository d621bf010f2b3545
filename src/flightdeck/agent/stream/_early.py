"""`agent --json-stream` writes `ready` before the engine is loaded (issue 14).

A host waits for `ready` before it sends anything. The engine (asyncio,
pydantic and the protocol models, the tools, the provider classes) takes
most of the start-up, yet for the usual start nothing it computes changes the
line: the settings, the new session's id and the sandbox state decide it.
So, when the start is *plain*, the start-up steps that can fail run first,
with the standard library and msgspec only (`prepare` of `engine/_setup.py`:
settings, provider, session), the bubblewrap probe beside them; then `ready`
is written (`_ready_line`) and the engine is loaded and carries on with that
same session (`run_json_stream` of `agent/_app.py`, which writes everything
after `ready`).

Plain means nothing but the engine could put into `ready` or right after it:
no `--resume` (its problems and pending approvals come after `ready`), no
AionUi compat file (its problems do too), no `[mcp]` table and no `.drivers`
folder (the extensions decorate `ready`), a workspace that is a directory and
a config that reads. Anything else takes the usual path, with nothing done
here. A setup error found here is handed to the usual path's report, before
anything is written: `ready` is never followed by a setup failure.

Lines a host sends after `ready` wait in the stdin pipe, in order, until the
engine reads them. A stop signal received meanwhile is kept and acted on as
soon as the engine serves.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from flightdeck.agent.engine._aionrs_compat import FILE
from flightdeck.agent.engine._setup import Setup, SetupError, prepare
from flightdeck.agent.stream._ready_line import ready_line

__all__ = ["Early", "early_ready", "is_plain"]

StopHook = Callable[[Callable[[], None]], None]


class Early(msgspec.Struct):
    """What happened before the engine: a `setup` whose `ready` line was
    written, or the `error` to report instead."""

    setup: Setup | None = None
    error: SetupError | None = None
    ready: str | None = None
    stop_requested: bool = False

    def on_stop_signal(self, hook: StopHook) -> StopHook:
        """`hook` (the engine's signal installer), first acting on a stop
        signal that came before it."""

        def install(callback: Callable[[], None]) -> None:
            hook(callback)
            if self.stop_requested:
                callback()

        return install


def is_plain(flags: Mapping[str, Any]) -> bool:
    """Whether the engine's `ready` and the lines after it follow from the
    settings, the session id and the sandbox alone (see the module's doc)."""
    from flightdeck.config import ConfigError, load_config

    if flags.get("resume"):
        return False
    workspace = Path(flags.get("workspace") or ".").resolve()
    if not workspace.is_dir():
        return False  # the usual path reports it
    if os.path.lexists(workspace / FILE) or os.path.lexists(workspace / ".drivers"):
        return False
    try:
        config = load_config(workspace)
    except ConfigError:
        return False  # the usual path reports it
    return "mcp" not in config.data


def early_ready(flags: Mapping[str, Any], env: Mapping[str, str], out: BinaryIO) -> Early | None:
    """Prepare a plain start and write its `ready` line to `out`. None: not
    plain, nothing done; the usual path does it all."""
    if not is_plain(flags):
        return None
    # Finding a working bubblewrap spawns a process; it runs beside setup.
    probe = threading.Thread(target=probe_bubblewrap, name="flightdeck-bwrap-probe", daemon=True)
    probe.start()
    try:
        setup = prepare(flags, env)
    except SetupError as exc:
        return Early(error=exc)
    probe.join()
    from flightdeck.agent.tools._sandbox import sandbox_state

    sandbox, _ = sandbox_state(setup.settings.sandbox)  # its notice: by the engine
    session_id = setup.session.id if setup.session is not None else None
    line = ready_line(setup.settings, session_id, sandbox)
    early = Early(setup, ready=line)
    _keep_stop_signals(early)
    write_line(out, line)
    # The provider's HTTP client now, beside the engine's import: its modules
    # first, then its TLS context, whose trust store is read in C without the
    # GIL while this thread imports the engine (flightdeck.llm.warm).
    from flightdeck.llm import warm

    warm(setup.provider, imports_first=True)
    return early


def probe_bubblewrap() -> None:
    from flightdeck.guard import bwrap_path

    bwrap_path()  # cached: the answer is read again by `sandbox_state`, here and in the engine


def _keep_stop_signals(early: Early) -> None:
    """Until the engine installs its own handlers: remember SIGTERM/SIGINT."""

    def keep(signum: int, frame: object) -> None:
        early.stop_requested = True

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, keep)


def write_line(out: BinaryIO, line: str) -> None:
    """One line to `out` now, as `_transport.LineWriter` writes it; a closed
    stream is left for the engine's writer to find."""
    data = (line + "\n").encode("utf-8", "backslashreplace")
    try:
        out.flush()
        fd = out.fileno()
    except (OSError, ValueError, AttributeError):
        out.write(data)  # an in-memory stream
        out.flush()
        return
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass
