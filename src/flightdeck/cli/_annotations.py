"""Diagnostics as CI systems read them: GitHub workflow commands and SARIF 2.1.0.

`--format github` prints one `::error file=…,line=…,col=…,title=…::message`
line per diagnostic; GitHub Actions turns each into an annotation on the
file's line in a pull request. `--format sarif` prints one SARIF log that
code-scanning services (GitHub's `upload-sarif`, GitLab, Azure DevOps) ingest.
Both are renderings of the same `Diagnostic` values the text and JSON
formats show; nothing here decides what is an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from flightdeck._version import __version__

if TYPE_CHECKING:
    from flightdeck.documents import Diagnostic

# One entry per checked file: its path and what was found in it.
Entries = Iterable[tuple[Path, Sequence["Diagnostic"]]]

_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _escape_data(text: str) -> str:
    # The workflow-command grammar: `%`, CR and LF are escaped in the message.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    # Property values additionally may not contain `:` or `,` (the separators).
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _display_path(path: Path) -> str:
    """Relative to the working directory when inside it (what CI annotates
    against: the repository root), else as given."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:  # outside the checkout: keep it absolute
        return absolute.as_posix()


def _file_of(path: Path, diag: Diagnostic) -> str:
    return _display_path(Path(diag.file)) if diag.file else _display_path(path)


def github_lines(entries: Entries) -> list[str]:
    """One workflow command per diagnostic, in file order."""
    lines: list[str] = []
    for path, diagnostics in entries:
        for diag in diagnostics:
            props = [f"file={_escape_property(_file_of(path, diag))}"]
            if diag.line is not None:
                props.append(f"line={diag.line}")
                if diag.column is not None:
                    props.append(f"col={diag.column}")
            props.append(f"title={_escape_property(diag.code)}")
            message = diag.message
            if diag.pointer:
                message += f" [{diag.pointer}]"
            if diag.hint:
                message += f"\nhint: {diag.hint}"
            level = _GITHUB_LEVEL[diag.severity.value]
            lines.append(f"::{level} {','.join(props)}::{_escape_data(message)}")
    return lines


def _artifact_uri(file: str) -> dict[str, str]:
    path = Path(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    # A relative reference against the checkout root (SARIF §3.4.4).
    return {"uri": quote(path.as_posix()), "uriBaseId": "%SRCROOT%"}


def _result(path: Path, diag: Diagnostic) -> dict[str, Any]:
    region: dict[str, int] = {}
    if diag.line is not None:
        region["startLine"] = diag.line
        if diag.column is not None:
            region["startColumn"] = diag.column
    physical: dict[str, Any] = {"artifactLocation": _artifact_uri(_file_of(path, diag))}
    if region:
        physical["region"] = region
    result: dict[str, Any] = {
        "ruleId": diag.code,
        "level": _SARIF_LEVEL[diag.severity.value],
        "message": {"text": diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")},
        "locations": [{"physicalLocation": physical}],
    }
    if diag.pointer:
        result["properties"] = {"pointer": diag.pointer}
    return result


def sarif_log(entries: Entries) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; each distinct code is a rule."""
    results: list[dict[str, Any]] = []
    rules: dict[str, dict[str, Any]] = {}
    for path, diagnostics in entries:
        for diag in diagnostics:
            results.append(_result(path, diag))
            rules.setdefault(
                diag.code,
                {
                    "id": diag.code,
                    "name": diag.code,
                    "shortDescription": {"text": diag.code},
                    "help": {"text": "See docs/errors.md for " + diag.code},
                },
            )
    driver = {
        "name": "flightdeck",
        "version": __version__,
        "informationUri": "https://flightdeck.dev",
        "rules": [rules[code] for code in sorted(rules)],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
