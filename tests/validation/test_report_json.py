"""`ValidationReport.to_json` is `json.dumps(report.to_dict(), indent=2)`,
byte for byte: msgspec writes it when that gives the same text (plain ASCII
without DEL), json.dumps otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.documents import Diagnostic, DocumentKind, Severity
from flightdeck.validation import FileReport, ValidationReport

# Quotes, backslashes, control characters, non-ASCII and astral characters:
# everything json escapes.
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ['"', "\\", "\n", "\x00", "\x7f", "\u2028", "é", "😀", "</script>", "", "plain ascii"]
)
_optional_text = st.none() | _text
_number = st.none() | st.integers(min_value=0, max_value=10**12)

_diagnostics = st.builds(
    Diagnostic,
    code=_text,
    message=_text,
    severity=st.sampled_from(list(Severity)),
    pointer=_text,
    schema_pointer=_optional_text,
    file=_optional_text,
    line=_number,
    column=_number,
    hint=_optional_text,
)
_files = st.builds(
    FileReport,
    # A name that is not UTF-8 comes back from the file system with lone
    # surrogates (\udcff), which msgspec refuses to encode.
    path=st.builds(Path, st.text(alphabet='abc/é"\\ .\x7f\udcff', min_size=1, max_size=10)),
    kind=st.none() | st.sampled_from(list(DocumentKind)),
    diagnostics=st.lists(_diagnostics, max_size=3).map(tuple),
    skipped=st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(files=st.lists(_files, max_size=4))
def test_to_json_is_json_dumps_of_to_dict(files: list[FileReport]) -> None:
    report = ValidationReport(files)
    assert report.to_json() == json.dumps(report.to_dict(), indent=2)
