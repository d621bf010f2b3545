"""A workspace with manifest tools: two ACTIONs, their TOOLs and one SDK
driver (a vendored module) implementing both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

APPEND_ACTION: dict[str, Any] = {
    "schema": "action/v1",
    "id": "notes:append",
    "version": "1.0.0",
    "description": "Append a line to the notes store.",
    "category": "notes",
    "mutates": ["notes:journal"],
    "risk_level": 1,
    "approval": "always",
}
COUNT_ACTION: dict[str, Any] = {
    "schema": "action/v1",
    "id": "text:count",
    "version": "1.0.0",
    "description": "Count the words of a text.",
    "category": "text",
    "mutates": [],
    "risk_level": 0,
    "approval": "auto",
}
APPEND_TOOL: dict[str, Any] = {
    "name": "Append note",
    "id": "notes.append",
    "description": "Append one line to the journal.",
    "version": "1.0.0",
    "implements": "notes:append",
    "inputs": {
        "type": "object",
        "properties": {"line": {"type": "string"}},
        "required": ["line"],
        "additionalProperties": False,
    },
    "outputs": {},
}
COUNT_TOOL: dict[str, Any] = {
    "name": "Count words",
    "id": "text.count",
    "description": "Count the words of a text.",
    "version": "1.0.0",
    "implements": "text:count",
    "inputs": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "outputs": {},
}
MODULE = """\
JOURNAL = []


def append(value):
    JOURNAL.append(value["line"])
    return {"appended": value["line"], "lines": len(JOURNAL)}


def count(value):
    return {"words": len(value["text"].split())}
"""


def _doc(data: dict[str, Any]) -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False) + "---\nBody.\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _entry(tool: str, function: str) -> dict[str, Any]:
    return {"tool": tool, "version": "^1.0.0", "metadata": {"sdk": {"function_ref": function}}}


def manifest_workspace(
    root: Path,
    *,
    append_action: dict[str, Any] | None = None,
    driver_extra: dict[str, Any] | None = None,
) -> Path:
    _write(root / ".actions" / "notes-append" / "ACTION.md", _doc(append_action or APPEND_ACTION))
    _write(root / ".actions" / "text-count" / "ACTION.md", _doc(COUNT_ACTION))
    _write(root / ".tools" / "notes-append" / "TOOL.md", _doc(APPEND_TOOL))
    _write(root / ".tools" / "text-count" / "TOOL.md", _doc(COUNT_TOOL))
    driver: dict[str, Any] = {
        "name": "Notes SDK",
        "id": "notes-sdk",
        "description": "Notes and text tools over a vendored module.",
        "version": "1.0.0",
        "kind": "sdk",
        "package": "notesmod",
        "package_manager": "local",
        "install": [{"method": "vendored", "path": "../../pkgs/notesmod"}],
        "implements": [_entry("notes.append", "append"), _entry("text.count", "count")],
        **(driver_extra or {}),
    }
    _write(root / ".drivers" / "notes-sdk" / "DRIVER.md", _doc(driver))
    _write(root / "pkgs" / "notesmod" / "__init__.py", MODULE)
    return root
