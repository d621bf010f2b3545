"""The wire models: closed, tagged, one reader and one writer, and the
protocol document kept equal to them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.agent import protocol as p
from flightdeck.agent.protocol._models import McpServerInfo, mcp_server_data

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def test_read_command_parses_every_command_type() -> None:
    lines = {
        '{"type":"message","msg_id":"m1","input":"x","files":["a.png"]}': p.MessageCommand,
        '{"type":"stop"}': p.StopCommand,
        '{"type":"tool_approve","call_id":"c","scope":"always"}': p.ToolApproveCommand,
        '{"type":"tool_deny","call_id":"c","reason":"no"}': p.ToolDenyCommand,
        '{"type":"init_history","text":"t"}': p.InitHistoryCommand,
        '{"type":"set_mode","mode":"auto_edit"}': p.SetModeCommand,
    }
    for line, model in lines.items():
        assert isinstance(p.read_command(line), model)


def test_defaults_scope_once_and_deny_reason() -> None:
    approve = p.read_command('{"type":"tool_approve","call_id":"c"}')
    assert isinstance(approve, p.ToolApproveCommand) and approve.scope == "once"


@pytest.mark.parametrize(
    ("line", "message", "msg_id"),
    [
        ("{", "Malformed JSON", None),
        ('"str"', "must be a JSON object", None),
        ("{}", "Missing field: type", None),
        ('{"type":"foo"}', "Unknown command type: foo", None),
        ('{"type":7}', "Unknown command type: 7", None),
        ('{"type":"message","msg_id":"m9"}', "missing field input", "m9"),
        ('{"type":"message","msg_id":"m9","input":"x","extra":1}', "unknown field extra", "m9"),
        ('{"type":"tool_approve","call_id":"c","scope":"forever"}', "scope", None),
        ('{"type":"message","msg_id":"m","input":5}', "input", "m"),
    ],
)
def test_spec_4_1_bad_lines_become_protocol_problems(
    line: str, message: str, msg_id: str | None
) -> None:
    problem = p.read_command(line)
    assert isinstance(problem, p.ProtocolProblem)
    assert message in problem.message and problem.msg_id == msg_id


@given(st.text(max_size=200))
def test_read_command_never_raises(line: str) -> None:
    result = p.read_command(line)  # any text parses to a command or a problem, never raises
    if isinstance(result, p.ProtocolProblem):
        assert result.message  # a problem always says what is wrong
    else:
        assert isinstance(result, p.COMMAND_TYPES)


def test_encode_event_omits_none_except_msg_id() -> None:
    error = p.ErrorEvent(error=p.ErrorInfo(code="protocol_error", message="x"))
    assert json.loads(p.encode_event(error)) == {
        "type": "error",
        "msg_id": None,
        "error": {"code": "protocol_error", "message": "x", "retryable": False},
    }
    result = p.ToolResultEvent(
        msg_id="m", call_id="c", tool_name="Read", status="success", output="o"
    )
    assert "metadata" not in json.loads(p.encode_event(result))
    assert "\n" not in p.encode_event(p.TextDeltaEvent(text="a\nb", msg_id="m"))


def test_events_are_closed_models() -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field `extra`"):
        p.decode_event('{"type":"stream_start","msg_id":"m","extra":1}')


@pytest.mark.parametrize("model", [*p.EVENT_TYPES, *p.COMMAND_TYPES])
def test_every_model_is_closed_and_frozen(model: type[msgspec.Struct]) -> None:
    # read_command names unknown fields before msgspec sees them; decode_event
    # and any other msgspec decoding rely on the models themselves.
    config = model.__struct_config__
    assert config.forbid_unknown_fields and config.frozen
    data = {"type": p.wire_type(model), "surplus": 1}
    with pytest.raises(msgspec.ValidationError, match="unknown field `surplus`"):
        msgspec.convert(data, model)


def test_decode_event_refuses_an_unknown_type() -> None:
    with pytest.raises(msgspec.ValidationError, match="Unknown event type"):
        p.decode_event('{"type":"message","msg_id":"m","input":"x"}')


def _documented_types(section: str) -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"<!-- {section} -->")
    end = text.index(f"<!-- /{section} -->")
    return set(re.findall(r"^### `([a-z_]+)`", text[start:end], re.MULTILINE))


def test_drift_every_event_and_command_type_is_documented() -> None:
    """docs/protocol.md lists exactly the event and command types the models define."""
    assert _documented_types("events") == {p.wire_type(m) for m in p.EVENT_TYPES}
    assert _documented_types("commands") == {p.wire_type(m) for m in p.COMMAND_TYPES}


def test_drift_every_field_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for model in (*p.EVENT_TYPES, *p.COMMAND_TYPES):
        for name in model.__struct_fields__:
            assert f"`{name}`" in text, f"{p.wire_type(model)}.{name} is not in docs/protocol.md"


@given(st.text(max_size=50), st.text(max_size=10))
def test_fast_delta_encoding_equals_the_generic_one(text: str, msg_id: str) -> None:
    for event in (
        p.TextDeltaEvent(text=text, msg_id=msg_id),
        p.ThinkingEvent(text=text, msg_id=msg_id),
    ):
        line = p.encode_event(event)
        assert json.loads(line) == msgspec.to_builtins(event)
        assert len(line.splitlines()) == 1  # never split by any line breaker
        assert p.decode_event(line) == event


def _samples() -> list[p.Event]:
    caps = p.Capabilities(tool_approval=True, thinking=False, mcp=False)
    info = p.ToolInfo(name="Bash", category="exec", args={"a": None, "b": [1]}, description="d")
    return [
        p.ReadyEvent(session_id="s", capabilities=caps),
        p.ReadyEvent(capabilities=caps),
        p.StreamStartEvent(msg_id="m"),
        p.ToolRequestEvent(msg_id="m", call_id="c", tool=info),
        p.ToolRunningEvent(msg_id="m", call_id="c", tool_name="Bash"),
        p.ToolResultEvent(
            msg_id="m",
            call_id="c",
            tool_name="Edit",
            status="success",
            output="-a\n+b",
            output_type="diff",
            metadata={"file_path": "/x"},
        ),
        p.ToolResultEvent(msg_id="m", call_id="c", tool_name="Read", status="error", output="o"),
        p.ToolCancelledEvent(msg_id="m", call_id="c", reason="r"),
        p.StreamEndEvent(msg_id="m", usage=p.UsageInfo(input_tokens=1)),
        p.ErrorEvent(error=p.ErrorInfo(code="tool_error", message="x", retryable=True)),
        p.InfoEvent(msg_id="m", message="i"),
        p.InfoEvent(message="i"),
    ]


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    return value


def test_encoding_equals_the_generic_dump_without_unset_optionals() -> None:
    for event in _samples():
        expected = _without_none(msgspec.to_builtins(event))
        if "msg_id" in type(event).__struct_fields__:
            expected.setdefault("msg_id", None)
        if isinstance(event, p.ToolRequestEvent):
            expected["tool"]["args"] = event.tool.args  # data keeps its nulls
        assert json.loads(p.encode_event(event)) == expected
        assert p.decode_event(p.encode_event(event)) == event
        assert list(json.loads(p.encode_event(event))) == [
            k for k in type(event).__struct_fields__ if k in expected
        ]


def test_mcp_server_listing_leaves_out_what_the_wire_keeps() -> None:
    """`agent tools` shows a server without an empty `prompts` or None errors
    (pydantic's exclude_if, before msgspec); `ready` keeps `prompts: []`."""
    info = McpServerInfo(transport="stdio", where="x", connected=True)
    caps = p.Capabilities(tool_approval=True, thinking=False, mcp=True, mcp_servers={"a": info})
    wire = json.loads(p.encode_event(p.ReadyEvent(capabilities=caps)))
    assert wire["capabilities"]["mcp_servers"]["a"] == {
        "transport": "stdio",
        "where": "x",
        "connected": True,
        "tools": [],
        "prompts": [],
    }
    assert mcp_server_data(info) == {
        "transport": "stdio",
        "where": "x",
        "connected": True,
        "tools": [],
    }
    full = McpServerInfo(
        transport="http", where="u", connected=False, error="e", error_code="c", prompts=["p"]
    )
    assert list(mcp_server_data(full)) == list(McpServerInfo.__struct_fields__)


def test_built_models_are_not_validated_but_read_ones_are() -> None:
    """CHANGELOG: constructing a model checks no limits (the agent builds them
    from its own values); reading a line does. Commands default their type."""
    long_id = "x" * 5000
    built = p.MessageCommand(msg_id=long_id, input="a")
    assert built.type == "message" and p.StopCommand().type == "stop"
    read = p.read_command(msgspec.json.encode(built))
    assert isinstance(read, p.ProtocolProblem)
    assert read.message == (
        "Invalid message command: msg_id: String should have at most 1024 characters"
    )
