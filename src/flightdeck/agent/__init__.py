"""The coding agent: the JSON Stream Protocol over stdin/stdout, the session
engine behind it, built-in tools and on-disk sessions.

`AgentSession` holds a conversation and acts on protocol commands, emitting
protocol events through a callable; `run_json_stream` wires it to stdin and
stdout. Protocol models live in `flightdeck.agent.protocol`.
"""

from flightdeck.agent._app import SetupError, run_json_stream, start
from flightdeck.agent._engine import AgentSession
from flightdeck.agent._settings import AgentSettings, SettingsError, resolve_settings
from flightdeck.agent._store import Session, SessionError, SessionInfo, SessionStore

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
