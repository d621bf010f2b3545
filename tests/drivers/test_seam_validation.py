"""The seam's fast accept path (jsonschema-rs) agrees with the IOHandle validator."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.drivers import DriverCallError, ToolBinding
from flightdeck.drivers._seam import check_input, check_output
from flightdeck.io import Err, IOHandle, define_io

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "number"}, "maxItems": 3},
    {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
]
values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=6,
)


@pytest.mark.parametrize("schema", SCHEMAS)
@given(value=values)
def test_property_fast_and_authoritative_validators_agree(
    schema: dict[str, Any], value: Any
) -> None:
    io = define_io({"inputs": schema, "outputs": schema})
    binding = ToolBinding("t", io)
    assert binding.fast_input is not None and binding.fast_output is not None
    expected_ok = not isinstance(io.validate_input(value), Err)
    try:
        check_input(binding, value)
        got_ok = True
    except DriverCallError as exc:
        assert exc.code == "input_invalid"
        got_ok = False
    assert got_ok == expected_ok
    try:
        check_output(binding, value)
        out_ok = True
    except DriverCallError:
        out_ok = False
    assert out_ok == expected_ok


def test_schemas_jsonschema_rs_cannot_compile_fall_back_to_the_io_handle() -> None:
    # define_io refuses a remote $ref; an IOHandle built directly can still hold one.
    io = IOHandle(inputs={"$ref": "https://example.invalid/x.json"})
    binding = ToolBinding("t", io)
    assert binding.fast_input is None


def test_file_contract_inputs_always_take_the_io_handle_path() -> None:
    io = define_io(
        {
            "inputs": {"type": "object"},
            "inputsFiles": {"src": {"path": "docs/a.md"}},
        }
    )
    binding = ToolBinding("t", io)
    assert binding.fast_input is None
    with pytest.raises(DriverCallError, match="_workflowFsRoot"):
        check_input(binding, {})
