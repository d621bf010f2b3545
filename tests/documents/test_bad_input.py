"""Every bad-input path of the document layer: the code and the location,
and that the other files of the same run are still reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.documents import Limits, load_document, parse_document
from flightdeck.validation import validate_paths

VALID_ACTION = """---
schema: action/v1
id: storage:commit
description: Commit pending writes.
risk_level: 1
---
# Body
"""


def _only(result_diags: tuple[object, ...]) -> object:
    assert len(result_diags) == 1, result_diags
    return result_diags[0]


def test_valid_action_loads_with_body_and_kind() -> None:
    result = parse_document(VALID_ACTION, path="x/ACTION.md")
    assert result.ok, result.diagnostics
    assert result.document is not None
    assert result.document.kind.value == "action"
    assert result.document.body == "# Body\n"
    assert result.document.data["risk_level"] == 1


def test_no_frontmatter() -> None:
    result = parse_document("# Just markdown\n", path="ACTION.md")
    assert result.document is None
    diag = result.diagnostics[0]
    assert (diag.code, diag.line, diag.column, diag.file) == (
        "document.no_frontmatter",
        1,
        1,
        "ACTION.md",
    )


def test_unclosed_frontmatter() -> None:
    result = parse_document("---\nid: a\ndescription: b\n", path="ACTION.md")
    assert result.document is None  # nothing half-parsed is handed on
    diag = _only(result.diagnostics)
    assert (diag.code, diag.line, diag.column, diag.file) == (  # type: ignore[attr-defined]
        "document.unclosed_frontmatter",
        1,
        1,
        "ACTION.md",
    )


def test_invalid_utf8_points_at_the_byte() -> None:
    raw = b"---\nid: a\ndescription: caf\xe9\n---\n"
    diag = parse_document(raw, path="ACTION.md").diagnostics[0]
    assert (diag.code, diag.line, diag.column) == ("document.invalid_utf8", 3, 17)


def test_tab_indentation() -> None:
    diag = parse_document("---\nrequires:\n\tnetwork: []\n---\n", path="ACTION.md").diagnostics[0]
    assert diag.code == "yaml.tab"
    assert diag.line == 3
    assert diag.hint and "spaces" in diag.hint


def test_duplicate_keys_point_at_the_second_key() -> None:
    text = "---\nschema: action/v1\nid: a:b\nid: c:d\ndescription: x\n---\n"
    diag = parse_document(text, path="ACTION.md").diagnostics[0]
    assert (diag.code, diag.line, diag.column, diag.pointer) == ("yaml.duplicate_key", 4, 1, "/id")
    assert "first at line 3" in diag.message


def test_alias_bomb_fails_fast() -> None:
    lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    text = "\n".join([*lines, "---", ""])
    diag = parse_document(text, path="ACTION.md").diagnostics[0]
    assert diag.code == "yaml.alias_bomb"
    # Refused at the alias that crosses the cap, while parsing: its line and pointer.
    assert diag.line is not None and diag.line >= 2
    assert diag.pointer.startswith("/a") and diag.pointer.count("/") == 2


def test_aliases_within_the_cap_are_expanded() -> None:
    text = (
        "---\nschema: action/v1\nid: a:b\ndescription: x\n"
        "tags: &t [one, two]\nmetadata: {copy: *t}\n---\n"
    )
    result = parse_document(text, path="ACTION.md")
    assert result.ok, result.diagnostics
    assert result.document is not None
    assert result.document.data["metadata"] == {"copy": ["one", "two"]}


@pytest.mark.parametrize("depth", [70, 20_000])
def test_deep_nesting_is_capped(depth: int) -> None:
    text = "---\nmetadata: " + "[" * depth + "]" * depth + "\n---\n"
    diag = parse_document(text, path="ACTION.md").diagnostics[0]
    assert diag.code == "yaml.too_deep"
    assert diag.line == 2


def test_depth_cap_can_be_raised() -> None:
    text = "---\nschema: action/v1\nid: a:b\ndescription: x\nmetadata: {k: " + "[" * 70
    text += "]" * 70 + "}\n---\n"
    assert parse_document(text, path="ACTION.md", limits=Limits(max_depth=100)).ok


def test_fifty_megabyte_file_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "ACTION.md"
    with big.open("wb") as handle:
        handle.write(b"---\nid: a\n---\n")
        handle.truncate(50 * 1024 * 1024)
    diag = load_document(big).diagnostics[0]
    assert diag.code == "document.too_large"
    assert diag.file == str(big)
    assert "limit" in diag.message


def test_wrong_type_names_field_expected_and_found() -> None:
    text = "---\nschema: action/v1\nid: a:b\ndescription: x\nmutates: storage:*\n---\n"
    diags = parse_document(text, path="ACTION.md").diagnostics
    diag = next(d for d in diags if d.pointer == "/mutates")
    assert diag.code == "schema.type"
    assert (diag.line, diag.column) == (5, 1)
    assert "list" in diag.message and "string" in diag.message


def test_unknown_field_in_closed_object_with_suggestion() -> None:
    text = "---\nschema: action/v1\nid: a:b\ndescription: x\nrisk_levle: 1\n---\n"
    diag = parse_document(text, path="ACTION.md").diagnostics[0]
    assert (diag.code, diag.pointer, diag.line) == ("schema.unknown_field", "/risk_levle", 5)
    assert diag.hint == "did you mean 'risk_level'?"


def test_on_key_stays_the_string_on() -> None:
    """YAML 1.2 rule: `on:` is the key "on", not the boolean true."""
    text = "---\nschema: action/v1\nid: a:b\ndescription: x\nmetadata:\n  on: yes\n  y: n\n---\n"
    result = parse_document(text, path="ACTION.md")
    assert result.ok, result.diagnostics
    assert result.document is not None
    assert result.document.data["metadata"] == {"on": "yes", "y": "n"}


def test_dates_stay_strings() -> None:
    text = "---\nschema: action/v1\nid: a:b\ndescription: x\nmetadata: {since: 2024-01-31}\n---\n"
    result = parse_document(text, path="ACTION.md")
    assert result.document is not None
    assert result.document.data["metadata"]["since"] == "2024-01-31"


@pytest.mark.parametrize("front", ["- a\n- b\n", "just a string\n", ""])
def test_non_mapping_frontmatter(front: str) -> None:
    diag = parse_document(f"---\n{front}---\n", path="ACTION.md").diagnostics[0]
    assert (diag.code, diag.line) == ("document.not_a_mapping", 2)


def test_crlf_and_bom_are_normalised() -> None:
    raw = ("\ufeff" + VALID_ACTION).replace("\n", "\r\n").encode("utf-8")
    result = parse_document(raw, path="ACTION.md")
    assert result.ok, result.diagnostics
    assert result.document is not None
    assert result.document.body == "# Body\n"


def test_all_problems_in_a_file_are_reported() -> None:
    text = "---\nschema: action/v1\nid: BAD ID\nrisk_level: 9\nextra: 1\n---\n"
    found = parse_document(text, path="ACTION.md").diagnostics
    assert sorted((d.code, d.pointer, d.line) for d in found) == [
        ("schema.maximum", "/risk_level", 4),
        ("schema.pattern", "/id", 3),
        ("schema.required", "", 2),  # description is missing: the mapping itself
        ("schema.unknown_field", "/extra", 5),
    ]


def test_binary_file_in_scanned_directory_is_skipped_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "TOOL.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ACTION.md").write_text(VALID_ACTION)
    report = validate_paths([tmp_path])
    assert report.ok
    skipped = [f for f in report.files if f.skipped]
    assert [f.path.name for f in skipped] == ["TOOL.md"]
    assert skipped[0].diagnostics[0].code == "document.binary_skipped"
    assert report.summary()["valid"] == 1


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    for name, text in [("x", "no frontmatter"), ("y", VALID_ACTION), ("z", "---\na: [\n---\n")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "ACTION.md").write_text(text)
    report = validate_paths([tmp_path])
    assert [f.valid for f in report.files] == [False, True, False]
    assert report.files[2].diagnostics[0].code == "yaml.syntax"


def test_unknown_kind_is_reported_with_hint(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("---\ntitle: hello\n---\n")
    diag = load_document(path).diagnostics[0]
    assert diag.code == "document.unknown_kind"
    assert diag.hint and "--as" in diag.hint


def test_kind_from_frontmatter_when_name_is_silent(tmp_path: Path) -> None:
    path = tmp_path / "commit.md"
    path.write_text(VALID_ACTION)
    result = load_document(path)
    assert result.ok and result.document is not None
    assert result.document.kind.value == "action"
