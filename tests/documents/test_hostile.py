"""Hostile documents are refused while parsing, located and coded; never a crash."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flightdeck.documents import Diagnostic, Limits, parse_document

HEAD = "---\nschema: action/v1\nid: a:b\ndescription: x\n"


def _first(text: str, limits: Limits | None = None) -> Diagnostic:
    result = parse_document(text, path="ACTION.md", limits=limits)
    assert result.diagnostics, "expected a diagnostic"
    return result.diagnostics[0]


def _cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flightdeck", "validate", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("opener,closer", [("[", "]"), ("{a: ", "}")])
def test_forty_thousand_nested_flow_collections_are_too_deep(opener: str, closer: str) -> None:
    diag = _first(HEAD + "x: " + opener * 40_000 + closer * 40_000 + "\n---\n")
    assert diag.code == "yaml.too_deep"
    assert diag.line == 5 and diag.pointer.startswith("/x/")


def test_deep_block_mapping_is_too_deep() -> None:
    body = "x:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(3_000))
    diag = _first(HEAD + body + "---\n")
    assert diag.code == "yaml.too_deep"
    assert diag.line is not None and diag.line > 60 and diag.pointer.startswith("/x/k0/k1")


def test_raised_depth_limit_still_has_a_hard_ceiling() -> None:
    text = HEAD + "x: " + "[" * 5_000 + "]" * 5_000 + "\n---\n"
    diag = _first(text, Limits(max_depth=100_000))
    assert diag.code == "yaml.too_deep"
    assert "128" in diag.message


def test_ten_thousand_digit_integer_is_refused_at_its_position() -> None:
    diag = _first(HEAD + "risk_level: " + "9" * 10_000 + "\n---\n")
    assert (diag.code, diag.pointer, diag.line, diag.column) == (
        "yaml.number_too_large",
        "/risk_level",
        5,
        13,
    )


@pytest.mark.parametrize("text", ["0x" + "f" * 500, "-" + "1" * 500, "!!int " + "7" * 5_000])
def test_every_integer_form_has_the_digit_cap(text: str) -> None:
    assert _first(HEAD + f"n: {text}\n---\n").code == "yaml.number_too_large"


def test_quoted_long_number_is_a_string() -> None:
    result = parse_document(HEAD + f'n: "{"9" * 10_000}"\n---\n', path="ACTION.md")
    assert result.document is not None and len(result.document.data["n"]) == 10_000


def test_scalar_size_cap() -> None:
    diag = _first(HEAD + "x: " + "a" * 2_000 + "\n---\n", Limits(max_scalar_chars=1_000))
    assert (diag.code, diag.pointer, diag.line) == ("yaml.scalar_too_large", "/x", 5)


def test_scalar_size_cap_on_a_frontmatter_that_is_one_scalar() -> None:
    # The whole frontmatter one long scalar: located at the root, not an
    # IndexError looking for the open mapping there is none of.
    diag = _first("---\n" + "a" * 2_000 + "\n---\n", Limits(max_scalar_chars=1_000))
    assert (diag.code, diag.pointer, diag.line, diag.column) == (
        "yaml.scalar_too_large",
        "",
        2,
        1,
    )


def test_key_count_cap_per_mapping() -> None:
    keys = "".join(f"u{i}: 1\n" for i in range(30))
    diag = _first(HEAD + keys + "---\n", Limits(max_keys=20))
    assert (diag.code, diag.pointer) == ("yaml.too_many_keys", "")
    assert diag.line == 22  # the 21st key: three header keys, then u0..u17 on lines 5..22


def test_diagnostics_are_capped_with_a_count_of_the_rest() -> None:
    keys = "".join(f"u{i}: 1\n" for i in range(500))
    diags = parse_document(HEAD + keys + "---\n", path="ACTION.md").diagnostics
    assert len(diags) == 101
    assert all(d.code == "schema.unknown_field" for d in diags[:100])
    last = diags[-1]
    assert last.code == "document.too_many_diagnostics" and last.is_error
    assert last.message.startswith("400 more")


def test_alias_through_anchor_keeps_depth_cap() -> None:
    nested = "[" * 40 + "]" * 40
    text = HEAD + f"a: &a {nested}\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n---\n"
    assert _first(text).code == "yaml.too_deep"


def test_undefined_alias_is_located() -> None:
    diag = _first(HEAD + "x: *nope\n---\n")
    assert diag.code in ("yaml.undefined_alias", "yaml.syntax")
    assert diag.line == 5


def test_second_document_is_refused() -> None:
    assert _first(HEAD + "...\nb: 1\n---\n").code == "yaml.syntax"


@pytest.mark.parametrize(
    "name,value,code",
    [
        ("deep", "[" * 40_000 + "]" * 40_000, "yaml.too_deep"),
        ("bigint", "9" * 10_000, "yaml.number_too_large"),
    ],
)
def test_cli_reports_hostile_file_and_exits_normally(
    tmp_path: Path, name: str, value: str, code: str
) -> None:
    path = tmp_path / "ACTION.md"
    path.write_text(HEAD + f"risk_level: {value}\n---\n", encoding="utf-8")
    done = _cli(path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert code in json.dumps(report)


def test_a_hundred_digit_integer_is_still_a_number() -> None:
    result = parse_document(HEAD + "metadata: {n: " + "9" * 100 + "}\n---\n", path="ACTION.md")
    assert result.document is not None
    assert result.document.data["metadata"]["n"] == int("9" * 100)


def test_unknown_field_hints_stop_after_the_budget() -> None:
    keys = "".join(f"u{i}: 1\n" for i in range(300))
    limits = Limits(max_diagnostics=1_000)
    diags = parse_document(HEAD + keys + "---\n", path="ACTION.md", limits=limits).diagnostics
    assert len(diags) == 300
    assert all(d.hint for d in diags[:200]) and not any(d.hint for d in diags[200:])


def test_a_validator_recursion_error_is_a_diagnostic(monkeypatch: pytest.MonkeyPatch) -> None:
    from flightdeck.documents import _offline, validate_data

    def deep(name: str, data: object) -> bool:
        raise RecursionError

    monkeypatch.setattr(_offline, "shipped_is_valid", deep)
    codes = [d.code for d in validate_data("action", {"schema": "action/v1"})]
    assert codes == ["document.too_deep_to_check"]


@pytest.mark.parametrize("value", ["{a: 1}", "[sdk]"])
def test_a_non_string_kind_field_is_not_a_crash(value: str) -> None:
    result = parse_document(f"---\nkind: {value}\nx: 1\n---\n", path="NOTES.md")
    assert [d.code for d in result.diagnostics] == ["document.unknown_kind"]


@pytest.mark.parametrize(
    "merge,line,column", [("<<: [1]", 5, 5), ("<<: [[1]]", 5, 5), ("<<:\n  - 1", 6, 3)]
)
def test_merging_a_written_out_list_of_non_mappings_is_a_bad_merge(
    merge: str, line: int, column: int
) -> None:
    # `<<` followed by a collection (not an alias) of non-mappings: located at
    # that collection, not an AttributeError on a missing event.
    diag = _first(HEAD + merge + "\n---\n")
    assert (diag.code, diag.pointer, diag.line, diag.column) == ("yaml.bad_merge", "", line, column)
