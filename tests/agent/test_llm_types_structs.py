"""`flightdeck.llm`'s types are msgspec Structs (issue 14: a dataclass costs
0.3-0.6 ms to create, on every agent start). They keep the dataclasses'
behaviour: each round-trips through the session codec, equal field values
give equal objects with equal hashes (or, as for the frozen dataclasses, a
TypeError when a field is a list or dict), and construction, repr, eq and
`__match_args__` are those of a frozen dataclass with the same fields."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck import llm
from flightdeck.agent.engine._codec import (
    block_from_json,
    block_to_json,
    message_from_json,
    message_to_json,
)
from flightdeck.llm import _types

TYPES = [
    v for v in vars(_types).values() if isinstance(v, type) and v.__module__ == _types.__name__
]

text = st.text(max_size=20)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
text_block = st.builds(llm.TextBlock, text)
image_block = st.builds(llm.ImageBlock, text, text)
blocks = st.one_of(
    text_block,
    st.builds(llm.ThinkingBlock, text, text, redacted=st.booleans()),
    image_block,
    st.builds(llm.ToolUseBlock, text, text, st.dictionaries(text, json_value, max_size=3)),
    st.builds(
        llm.ToolResultBlock, text, st.lists(text_block | image_block, max_size=3), st.booleans()
    ),
)
usage = st.builds(llm.Usage, *[st.integers(0, 10**6)] * 4)
messages = st.builds(
    llm.Message, st.sampled_from(["user", "assistant"]), st.lists(blocks, max_size=3)
)
response = st.builds(
    llm.Response,
    st.lists(blocks, max_size=2),
    st.sampled_from(["end_turn", "tool_use", "max_tokens"]),
    usage,
    text,
)
values = st.one_of(
    blocks,
    messages,
    usage,
    response,
    st.builds(llm.ToolSpec, text, text, st.dictionaries(text, json_value, max_size=2)),
    st.builds(
        llm.Request,
        text,
        st.lists(messages, max_size=2),
        st.none() | text,
        st.lists(st.builds(llm.ToolSpec, text, text, st.just({})), max_size=2),
        st.integers(1, 10**5),
        st.none() | st.integers(1024, 10**5),
        st.none() | st.floats(0, 1),
    ),
    st.builds(llm.TextDelta, text),
    st.builds(llm.ThinkingDelta, text),
    st.builds(llm.ToolCallReady, st.builds(llm.ToolUseBlock, text, text, st.just({}))),
    st.builds(llm.StreamDone, response),
)


def _twin(cls: type[msgspec.Struct]) -> Any:
    """A frozen dataclass with `cls`'s fields, defaults and order."""
    specs: list[Any] = []
    for f in msgspec.structs.fields(cls):
        if f.default is not msgspec.NODEFAULT:
            specs.append((f.name, Any, dataclasses.field(default=f.default)))
        elif f.default_factory is not msgspec.NODEFAULT:
            specs.append((f.name, Any, dataclasses.field(default_factory=f.default_factory)))
        else:
            specs.append((f.name, Any))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True)


def _as_twin(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        fields = {k: _as_twin(getattr(value, k)) for k in value.__struct_fields__}
        return _twin(type(value))(**fields)
    if isinstance(value, list):
        return [_as_twin(v) for v in value]
    return value


def test_every_type_is_a_frozen_struct() -> None:
    assert len(TYPES) == 14
    for cls in TYPES:
        assert issubclass(cls, msgspec.Struct) and cls.__struct_config__.frozen


@given(blocks)
def test_blocks_round_trip_through_the_session_codec(block: Any) -> None:
    assert block_from_json(json.loads(json.dumps(block_to_json(block)))) == block


@given(messages)
def test_messages_round_trip_through_the_session_codec(message: llm.Message) -> None:
    assert message_from_json(json.loads(json.dumps(message_to_json(message)))) == message


@given(values)
def test_equal_fields_give_equal_objects_and_hashes(value: Any) -> None:
    other = copy.deepcopy(value)
    assert other == value and other is not value
    again = type(value)(*(getattr(value, k) for k in value.__struct_fields__))
    assert again == value
    with pytest.raises(AttributeError):  # frozen (a dataclass: FrozenInstanceError)
        setattr(value, value.__struct_fields__[0], None)
    try:
        hash(_as_twin(value))
        hashable = True
    except TypeError:
        hashable = False
    if not hashable:  # a list or dict field: the dataclass cannot hash it either
        with pytest.raises(TypeError):
            hash(value)
    else:
        assert hash(other) == hash(value) == hash(again)


@given(values)
def test_repr_eq_and_match_args_are_the_dataclasses(value: Any) -> None:
    twin = _as_twin(value)
    assert repr(value) == repr(twin)
    assert type(value).__match_args__ == type(twin).__match_args__
    assert (value == copy.deepcopy(value)) == (twin == copy.deepcopy(twin))
    assert value != twin  # another class is never equal, as between dataclasses


def test_defaults_and_replace() -> None:
    assert repr(llm.Request("m", [])) == (
        "Request(model='m', messages=[], system=None, tools=[], max_tokens=4096,"
        " thinking_budget=None, temperature=None)"
    )
    assert llm.Request("m", []).tools is not llm.Request("m", []).tools
    assert llm.Usage(1, 2) + llm.Usage(3, 4, 5, 6) == llm.Usage(4, 6, 5, 6)
    block = llm.ToolUseBlock("a", "n", {})
    assert msgspec.structs.replace(block, id="b") == llm.ToolUseBlock("b", "n", {})
    match block:
        case llm.ToolUseBlock(id, name):
            assert (id, name) == ("a", "n")
