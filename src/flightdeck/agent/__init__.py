"""The coding agent: the JSON Stream Protocol over stdin/stdout, the session
engine behind it, built-in tools and on-disk sessions.

`AgentSession` holds a conversation and acts on protocol commands, emitting
protocol events through a callable; `run_json_stream` wires it to stdin and
stdout. Protocol models live in `flightdeck.agent.protocol`.

Inside: `protocol/` (the wire's models and line checks), `engine/` (the
session, turns, compaction, approvals, settings, the session store, start-up
steps; no transport, no extension), `stream/` (the JSON stream transport and
its early `ready`), `extensions/` (MCP servers in a session, `Spawn`, manifest
tools; registered with the engine through its `Extension`), `terminal/` (the
chat for a person), `acp/`, `mcp/` and `tools/`; this package's own modules
are the app that wires them (`_app`, `_startup`).
"""

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

if _typing.TYPE_CHECKING:
    from flightdeck.agent._app import SetupError, run_json_stream, start
    from flightdeck.agent.engine._session import AgentSession
    from flightdeck.agent.engine._settings import AgentSettings, SettingsError, resolve_settings
    from flightdeck.agent.engine._store import Session, SessionError, SessionInfo, SessionStore

# Where each name lives. Imported on first use (PEP 562): `agent --acp` answers
# `initialize` from `flightdeck.agent.acp` before the engine (protocol models,
# tools, providers) is imported.
_HOMES = {
    "SetupError": "_app",
    "run_json_stream": "_app",
    "start": "_app",
    "AgentSession": "engine._session",
    "AgentSettings": "engine._settings",
    "SettingsError": "engine._settings",
    "resolve_settings": "engine._settings",
    "Session": "engine._store",
    "SessionError": "engine._store",
    "SessionInfo": "engine._store",
    "SessionStore": "engine._store",
}


_LAZY = _LazyNames(__name__, {name: f"{__name__}.{home}" for name, home in _HOMES.items()})


def __getattr__(name: str) -> _typing.Any:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.names()


__all__ = [
    "AgentSession",
    "AgentSettings",
    "Session",
    "SessionError",
    "SessionInfo",
    "SessionStore",
    "SettingsError",
    "SetupError",
    "resolve_settings",
    "run_json_stream",
    "start",
]
