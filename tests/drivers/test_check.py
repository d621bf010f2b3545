"""`check_document`: the validate hook for DRIVER documents (reads manifests only)."""

from __future__ import annotations

import sys
from pathlib import Path

from flightdeck.documents import Severity, load_document
from flightdeck.drivers import check_document
from tests.drivers._ws import add_driver, sdk_driver, workspace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "drivers" / ".drivers"


def check(path: Path) -> list[tuple[str, str]]:
    doc = load_document(path).document
    assert doc is not None
    diags = check_document(doc)
    assert all(d.file == str(path) and d.line for d in diags)
    return [(d.code, d.pointer) for d in diags if d.severity is Severity.ERROR]


def test_the_examples_are_clean() -> None:
    for folder in sorted(EXAMPLES.iterdir()):
        assert check(folder / "DRIVER.md") == []


def test_validate_does_not_import_the_package(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    data = sdk_driver(manager="pip", package="not-imported-pkg-xyz", install=[])
    assert check(add_driver(ws, data)) == []
    assert "not_imported_pkg_xyz" not in sys.modules


def test_install_template_extract_secrets_and_drop_inputs_are_checked(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    data = sdk_driver(
        manager="pip",
        package="p",
        install=[{"method": "npm", "package": "p"}],
        package_version="not a range !!",
        sdk={"args_template": {"a": "${input.", "b": "${secrets.NOPE}"}, "result_extract": "$["},
        entry={"schema_narrowing": {"drop_inputs": ["bogus"]}},
    )
    got = check(add_driver(ws, data))
    codes = [c for c, _ in got]
    assert codes == [
        "install_mismatch",
        "version_range_invalid",
        "template_error",
        "extract_invalid",
        "template_error",
        "drop_input_unknown",
    ]


def test_foreign_package_manager_is_informational(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    path = add_driver(ws, sdk_driver(manager="cargo", package="tokio", install=[]))
    doc = load_document(path).document
    assert doc is not None
    infos = [d.code for d in check_document(doc) if d.severity is Severity.INFO]
    assert infos == ["driver_not_runnable"]


def test_non_sdk_drivers_are_left_alone(tmp_path: Path) -> None:
    doc = load_document(
        Path(__file__).resolve().parents[1] / "data/corpus/valid/driver/aip30-ex-gh-cli/DRIVER.md"
    ).document
    assert doc is not None and check_document(doc) == []


def test_mapping_on_an_sdk_entry_is_a_warning(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    path = add_driver(ws, sdk_driver(entry={"mapping": {"text": "prompt"}}))
    doc = load_document(path).document
    assert doc is not None
    warnings = [(d.code, d.line) for d in check_document(doc) if d.severity is Severity.WARNING]
    assert len(warnings) == 1 and warnings[0][0] == "mapping_ignored" and warnings[0][1]
