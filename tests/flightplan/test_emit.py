"""The frozen SKILL.md is YAML that reads back to the same JSON data."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.documents import parse_document
from flightdeck.flightplan._canonical import jcs
from flightdeck.flightplan._emit import emit_skill

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12) | st.sampled_from(
    [
        "on",
        "yes",
        "No",
        "~",
        "null",
        "0o17",
        "0x1F",
        "1e5",
        ".5",
        "-.inf",
        "2026-01-01",
        "1_000",
        "007",
        "+1",
        "true",
        "a: b",
        "- x",
        "#c",
        "'q'",
        '"d"',
        "",
        " lead",
        "trail ",
        "multi\nline",
    ]
)
_json: Any = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text, _json, min_size=1, max_size=5), _text)
def test_emitted_yaml_round_trips_to_the_same_jcs_bytes(data: dict[str, Any], body: str) -> None:
    text = emit_skill(data, body)
    result = parse_document(text, kind="skill")
    assert result.document is not None, result.diagnostics
    assert jcs(result.document.data) == jcs(data)
    assert result.document.body == body.replace("\r\n", "\n").replace("\r", "\n")
