"""The `flightdeck validate` hook for DRIVER documents.

Reads manifests only: no package import, no I/O beyond reading the DRIVER.md's
TOOL.md files. Narrowing against actions is reported by `flightdeck.actions`'
own hook; this one adds what is specific to SDK drivers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from flightdeck.documents import (
    Diagnostic,
    Document,
    DocumentKind,
    Severity,
    load_document,
    locate,
)
from flightdeck.drivers._manifest import compile_manifest
from flightdeck.drivers._package import runnable_problem
from flightdeck.drivers._tools import contract_problems, find_tool_file


def _workspace_of(path: Path | None) -> Path | None:
    if path is None:
        return None
    folder = path.parent
    return folder.parent.parent if folder.parent.name == ".drivers" else None


def check_document(document: Document) -> list[Diagnostic]:
    """SDK-driver checks for one DRIVER document, located at file:line:col.

    Install methods against package_manager, version range syntax, template and
    result_extract syntax, `${secrets.X}` declared in auth.state.env, and, when
    the bound TOOL can be read, drop_inputs naming its real optional inputs.
    """
    if document.kind is not DocumentKind.DRIVER or document.data.get("kind") != "sdk":
        return []
    data = document.data
    compiled, diags = compile_manifest(data)
    problem = runnable_problem(data)
    if problem is not None:
        diags.append(
            Diagnostic(problem.code, problem.message, Severity.INFO, pointer=problem.pointer)
        )
    # Resolved only for entries to look up (a resolve is a stat per component).
    path = document.path.resolve() if document.path is not None and compiled.entries else None
    driver_dir = path.parent if path is not None else None
    for spec in compiled.entries:
        file = find_tool_file(spec.tool, driver_dir, _workspace_of(path))
        if file is None:
            continue
        loaded = load_document(file, kind=DocumentKind.TOOL)
        tool = loaded.document.data if loaded.document is not None else None
        if not isinstance(tool, Mapping) or not isinstance(tool.get("id"), str):
            continue
        diags += contract_problems(
            spec, tool["id"], str(tool.get("version", "")), tool.get("inputs")
        )
    return list(locate(diags, str(document.path) if document.path else None, document.source_map))
