"""The agent's public surface is exactly what `__all__` names."""

from __future__ import annotations

import flightdeck.agent
import flightdeck.agent.protocol
import flightdeck.agent.tools


def test_public_names_are_pinned() -> None:
    assert flightdeck.agent.__all__ == [
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
    for module in (flightdeck.agent, flightdeck.agent.protocol, flightdeck.agent.tools):
        assert len(set(module.__all__)) == len(module.__all__)
        public = {n for n in dir(module) if not n.startswith("_")}
        assert set(module.__all__) <= public
        for name in module.__all__:  # a lazily imported name resolves too
            assert getattr(module, name) is not None
