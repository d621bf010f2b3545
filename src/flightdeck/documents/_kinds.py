"""Telling a document's kind from its file name, else from its frontmatter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flightdeck.documents._document import DocumentKind

_BY_NAME = {
    "ACTION.md": DocumentKind.ACTION,
    "TOOL.md": DocumentKind.TOOL,
    "DRIVER.md": DocumentKind.DRIVER,
    "SKILL.md": DocumentKind.SKILL,
}


def kind_from_name(path: Path | None) -> DocumentKind | None:
    if path is None:
        return None
    if path.name in _BY_NAME:
        return _BY_NAME[path.name]
    if path.name.endswith(".skill.md"):
        return DocumentKind.SKILL
    return None


def is_manifest_name(name: str) -> bool:
    """Whether a directory scan should pick up a file of this name."""
    return name in _BY_NAME or name.endswith(".skill.md")


def kind_from_data(data: Any) -> DocumentKind | None:
    """Infer the kind of a frontmatter whose file name says nothing."""
    if not isinstance(data, dict):
        return None
    schema = data.get("schema")
    if isinstance(schema, str):
        prefix = schema.split("/", 1)[0]
        for kind in DocumentKind:
            if prefix == kind.value:
                return kind
    if "aileron" in data:
        return DocumentKind.SKILL
    driver_kind = data.get("kind")  # any JSON value: only a string can name a driver kind
    if isinstance(driver_kind, str) and driver_kind in {"sdk", "cli", "http", "mcp", "builtin"}:
        return DocumentKind.DRIVER
    if "runner" in data and len(data) == 1:
        return DocumentKind.RUNNER
    if data and set(data) <= {"inputs", "outputs", "inputsFiles", "outputsFiles"}:
        return DocumentKind.IO
    return None


def coerce_kind(kind: DocumentKind | str | None) -> DocumentKind | None:
    if kind is None or isinstance(kind, DocumentKind):
        return kind
    try:
        return DocumentKind(kind.lower())
    except ValueError:
        names = ", ".join(k.value for k in DocumentKind)
        raise ValueError(f"unknown document kind {kind!r} (one of: {names})") from None


def schema_name(kind: DocumentKind, data: Any) -> str:
    """The shipped schema a document of this kind validates against."""
    if kind is DocumentKind.DRIVER and isinstance(data, dict) and data.get("kind") == "sdk":
        return "driver-sdk"
    return kind.value
