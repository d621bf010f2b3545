"""Finding the TOOL an `implements[]` entry binds, and checking the binding.

`tool:` is a path (relative to the driver's folder, then the workspace; a
folder means its TOOL.md) or a tool id looked up in `<workspace>/.tools/*/`.
The TOOL is loaded with `flightdeck.tools.load_tool` (which resolves and
checks its action); the entry's own safety fields are then checked against
that action with `flightdeck.actions.check_narrowing`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flightdeck.actions import check_narrowing, implementor_view, library_search_path
from flightdeck.documents import Diagnostic, DocumentKind, manifest_id, pointer_join
from flightdeck.drivers._manifest import EntrySpec
from flightdeck.drivers._package import parse_range
from flightdeck.tools import ToolDefinitionError, ToolHandle, load_tool

TOOL_UNRESOLVABLE = "tool_unresolvable"


def find_tool_file(tool: str, driver_dir: Path | None, workspace: Path | None) -> Path | None:
    bases = [b for b in (driver_dir, workspace) if b is not None]
    if "/" in tool or tool.endswith(".md") or tool.startswith("."):
        for base in bases:
            candidate = base / tool
            if candidate.is_dir():
                candidate = candidate / "TOOL.md"
            if candidate.is_file():
                return candidate
        return None
    for base in bases:
        if not (base / ".tools").is_dir():
            continue  # the common case, without a glob (~15 us) that finds nothing
        for candidate in sorted(base.glob(".tools/*/TOOL.md")):
            if manifest_id(candidate, DocumentKind.TOOL) == tool:
                return candidate
    return None


def input_names(inputs: Any) -> tuple[set[str], set[str]]:
    """(declared input names, required input names) of an inputs schema."""
    schema = inputs if isinstance(inputs, Mapping) else {}
    props = schema.get("properties")
    required = schema.get("required")
    names = set(props) if isinstance(props, Mapping) else set()
    return names, set(required) if isinstance(required, list) else set()


def contract_problems(
    spec: EntrySpec, tool_id: str, tool_version: str, inputs: Any
) -> list[Diagnostic]:
    """Tool version in the entry's range; drop_inputs name real, optional inputs."""
    out: list[Diagnostic] = []
    where = pointer_join(spec.pointer, "version")
    try:
        in_range = parse_range(spec.version)(tool_version)
    except ValueError as exc:
        out.append(Diagnostic("version_range_invalid", str(exc), pointer=where))
        in_range = True
    if not in_range:
        out.append(
            Diagnostic(
                "tool_version_mismatch",
                f"tool {tool_id} is version {tool_version}; this entry binds {spec.version}",
                pointer=where,
            )
        )
    names, required = input_names(inputs)
    for j, name in enumerate(spec.drop_inputs):
        at = pointer_join(spec.pointer, "schema_narrowing", "drop_inputs", j)
        if name not in names:
            out.append(
                Diagnostic(
                    "drop_input_unknown",
                    f"drop_inputs names {name!r}, which tool {tool_id} does not declare",
                    pointer=at,
                    hint=f"inputs are: {', '.join(sorted(names)) or '(none)'}",
                )
            )
        elif name in required:
            out.append(
                Diagnostic(
                    "drop_input_required",
                    f"drop_inputs names {name!r}, a required input of tool {tool_id}; "
                    "only optional inputs can be dropped",
                    pointer=at,
                )
            )
    return out


def binding_problems(
    spec: EntrySpec, tool: ToolHandle, entry: Mapping[str, Any]
) -> list[Diagnostic]:
    """`contract_problems` plus the entry's narrowing against the tool's action."""
    out = contract_problems(spec, tool.id, tool.version, tool.io.inputs)
    if tool.action is not None:
        result = check_narrowing(implementor_view(entry), tool.action)
        out += [
            Diagnostic(d.code, d.message, d.severity, pointer=spec.pointer + d.pointer, hint=d.hint)
            for d in result.violations
        ]
    return out


def load_bound_tool(
    spec: EntrySpec,
    driver_dir: Path | None,
    workspace: Path | None,
    libraries: Sequence[str | Path] = (),
) -> tuple[ToolHandle | None, list[Diagnostic]]:
    where = pointer_join(spec.pointer, "tool")
    file = find_tool_file(spec.tool, driver_dir, workspace)
    if file is None:
        return None, [
            Diagnostic(
                TOOL_UNRESOLVABLE,
                f"tool {spec.tool!r} not found (looked beside the driver and in the workspace)",
                pointer=where,
            )
        ]
    try:
        # The bound TOOL's action may live in a library on the workspace's
        # search path (FLIGHTDECK_LIBRARY_PATH, [library] paths), not only
        # in its .actions/; `libraries` are searched first (--library).
        search = library_search_path(libraries, workspace=workspace)
        return load_tool(file, workspace=workspace, libraries=search), []
    except ToolDefinitionError as exc:
        first = exc.diagnostics[0] if exc.diagnostics else None
        detail = f"{first.location}: {first.code}: {first.message}" if first else "invalid"
        return None, [
            Diagnostic(TOOL_UNRESOLVABLE, f"tool {spec.tool!r} is invalid: {detail}", pointer=where)
        ]
