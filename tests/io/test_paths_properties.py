"""Property tests: interpolation is one-pass; no generated path escapes the workspace."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.io import TOKENS, confine, interpolate
from flightdeck.io._paths import confine_target

_token = st.sampled_from([f"<{t}>" for t in TOKENS])
_text = st.text(alphabet="ab-_.</>xyz", max_size=6)
_template = st.lists(st.one_of(_token, _text), max_size=8).map("".join)
_value = st.lists(st.one_of(_token, st.text(alphabet="ab<>.-", max_size=5)), max_size=4).map(
    "".join
)


@given(_template, st.fixed_dictionaries({t: _value for t in TOKENS}))
def test_aip16_path_interpolation_must_be_one_pass(template: str, values: dict[str, str]) -> None:
    """Tokens inside replaced values are never re-expanded."""
    out = interpolate(template, values)
    # Reference: scan left to right once, replacing tokens as they are met.
    expected, i = "", 0
    while i < len(template):
        for name in TOKENS:
            tok = f"<{name}>"
            if template.startswith(tok, i):
                expected += values[name]
                i += len(tok)
                break
        else:
            expected += template[i]
            i += 1
    assert out == expected


def test_a_value_containing_a_token_stays_literal() -> None:
    assert interpolate(
        "out/<runId>/<isoDate>", {"runId": "<isoDate>", "isoDate": "2026-01-01"}
    ) == ("out/<isoDate>/2026-01-01")


_segment = st.sampled_from(["a", "b", "..", ".", "", "link", "out", "/", "\\", "c:", "~"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_segment, min_size=1, max_size=6))
def test_no_generated_path_escapes_the_workspace(parts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "a").mkdir(parents=True)
        (ws / "link").symlink_to(Path(tmp), target_is_directory=True)  # points outside
        path = "/".join(parts)
        root = os.path.realpath(ws)
        for check in (confine, confine_target):
            try:
                real = check(ws, path)
            except ValueError:
                continue
            assert os.path.commonpath([root, str(real)]) == root and str(real) != root
