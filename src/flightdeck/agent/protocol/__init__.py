"""The JSON Stream Protocol: every command and event as a typed, closed
model, the one way a line becomes a command (`read_command`) and an event a
line (`encode_event`), and the bounds a line is checked against first.

This package is the vocabulary the engine, the transports (the JSON stream,
ACP, the terminal chat) and the extensions share; it imports nothing else of
the agent. Its names are imported on first use (PEP 562): the line reader
(`_lines` of the stream) and the early `ready` line use `_wire`, `_limits`
and `_json` before the models are loaded.
"""

from __future__ import annotations

from flightdeck._lazy import LazyNames as _LazyNames

# Not `typing.TYPE_CHECKING`: the early `ready` path imports this package
# before typing matters; mypy treats any name TYPE_CHECKING the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from flightdeck.agent.protocol._decode import read_command
    from flightdeck.agent.protocol._models import (
        COMMAND_TYPES,
        EVENT_TYPES,
        PROTOCOL_VERSION,
        AddMcpServerCommand,
        Capabilities,
        Command,
        ConfigChangedEvent,
        EffectiveConfig,
        ErrorEvent,
        ErrorInfo,
        Event,
        InfoEvent,
        InitHistoryCommand,
        McpAuthRequiredEvent,
        McpReadyEvent,
        MessageCommand,
        PingCommand,
        PongEvent,
        ProtocolProblem,
        ReadyEvent,
        SetConfigCommand,
        SetModeCommand,
        StopCommand,
        StreamEndEvent,
        StreamStartEvent,
        TextDeltaEvent,
        ThinkingEvent,
        ToolApproveCommand,
        ToolCancelledEvent,
        ToolDenyCommand,
        ToolInfo,
        ToolProgressEvent,
        ToolRequestEvent,
        ToolResultEvent,
        ToolRunningEvent,
        UsageInfo,
        decode_event,
        encode_event,
        wire_type,
    )

__all__ = [
    "COMMAND_TYPES",
    "EVENT_TYPES",
    "PROTOCOL_VERSION",
    "AddMcpServerCommand",
    "Capabilities",
    "Command",
    "ConfigChangedEvent",
    "EffectiveConfig",
    "ErrorEvent",
    "ErrorInfo",
    "Event",
    "InfoEvent",
    "InitHistoryCommand",
    "McpAuthRequiredEvent",
    "McpReadyEvent",
    "MessageCommand",
    "PingCommand",
    "PongEvent",
    "ProtocolProblem",
    "ReadyEvent",
    "SetConfigCommand",
    "SetModeCommand",
    "StopCommand",
    "StreamEndEvent",
    "StreamStartEvent",
    "TextDeltaEvent",
    "ThinkingEvent",
    "ToolApproveCommand",
    "ToolCancelledEvent",
    "ToolDenyCommand",
    "ToolInfo",
    "ToolProgressEvent",
    "ToolRequestEvent",
    "ToolResultEvent",
    "ToolRunningEvent",
    "UsageInfo",
    "decode_event",
    "encode_event",
    "read_command",
    "wire_type",
]

# `read_command` is the decoder's; every other name is the models' module's.
_LAZY = _LazyNames(
    __name__,
    {n: f"{__name__}.{'_decode' if n == 'read_command' else '_models'}" for n in __all__},
)


def __getattr__(name: str) -> Any:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.names()
