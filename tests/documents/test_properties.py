"""Property tests: whatever the input, loading returns diagnostics, never raises."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.documents import DocumentKind, parse_document

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["on", "off", "yes", "no", "y", "n", "2024-01-01", "~", "0x1f", "1e3"]),
)
_json_like = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=12), children, max_size=5),
    ),
    max_leaves=25,
)
_kinds = st.sampled_from([None, *DocumentKind])


class _Yaml12Dumper(yaml.SafeDumper):
    """PyYAML emits YAML 1.1: a string like `0E0` is plain there but a float
    in YAML 1.2. Quote every string that YAML 1.2 would not read back as-is."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    try:
        reread = yaml.safe_load(f"k: {value}") if value else None
    except yaml.YAMLError:
        reread = None
    plain_ok = bool(value) and isinstance(reread, dict) and reread.get("k") == value
    if not plain_ok or _looks_numeric(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


def _looks_numeric(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return value.lower() in {"true", "false", "null", "~", ".inf", "-.inf", ".nan"}
    return True


_Yaml12Dumper.add_representer(str, _represent_str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400), kind=_kinds)
def test_arbitrary_text_never_raises(text: str, kind: DocumentKind | None) -> None:
    result = parse_document(text, path="SKILL.md", kind=kind)
    assert result.document is not None or result.diagnostics
    for diag in result.diagnostics:
        assert diag.code and diag.message and diag.file == "SKILL.md"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    result = parse_document(b"---\n" + body + b"\n---\n", path="TOOL.md")
    assert result.document is not None or result.diagnostics


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(st.text(min_size=1, max_size=12), _json_like, max_size=6), kind=_kinds)
def test_yaml_shaped_data_round_trips_or_is_diagnosed(data: dict[str, Any], kind: Any) -> None:
    text = "---\n" + yaml.dump(data, Dumper=_Yaml12Dumper, allow_unicode=True) + "---\n"
    result = parse_document(text, path="x.md", kind=kind or DocumentKind.ACTION)
    assert result.document is not None, result.diagnostics
    # What reaches JSON Schema is plain JSON data equal to what was written.
    assert json.loads(json.dumps(result.document.data)) == result.document.data
    assert result.document.data == data
    for diag in result.diagnostics:
        assert diag.code.startswith("schema.") and diag.line is not None
