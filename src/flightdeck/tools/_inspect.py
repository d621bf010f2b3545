"""`inspect_manifest`: the safety view of a TOOL or an ACTION, with provenance.

For a tool: what it may mutate, its risk, its approval class, which action
it implements, and where each value came from (`action`, `implementor`,
`action+implementor`, `default`). For an action: its own values, each
`declared`, `default` or `derived` (verb / target_kind from the id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flightdeck.actions import (
    SAFETY_FIELDS,
    ActionDefinitionError,
    ActionResolver,
    library_search_path,
    load_action,
)
from flightdeck.config import ConfigError, load_config
from flightdeck.documents import Diagnostic, DocumentKind, load_document
from flightdeck.tools._define import ToolDefinitionError, load_tool


@dataclass(frozen=True)
class InspectReport:
    kind: str  # "tool" | "action"
    path: str
    id: str | None
    fields: dict[str, Any] = field(default_factory=dict)  # name -> value
    origins: dict[str, str] = field(default_factory=dict)  # name -> where it came from
    implements: dict[str, Any] | None = None  # {"ref", "id", "version", "source"}
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "id": self.id,
            "implements": self.implements,
            "view": {
                name: {"value": self.fields[name], "from": self.origins.get(name)}
                for name in self.fields
            },
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "ok": self.ok,
        }


def _action_report(path: Path) -> InspectReport:
    file = path / "ACTION.md" if path.is_dir() else path
    try:
        action = load_action(file)
    except ActionDefinitionError as exc:
        return InspectReport("action", str(file), None, diagnostics=exc.diagnostics)
    loaded = load_document(file, kind=DocumentKind.ACTION)
    declared = set(loaded.document.data) if loaded.document else set()
    values = action.to_dict()
    fields = {name: values[name] for name in SAFETY_FIELDS}
    origins = {}
    for name in SAFETY_FIELDS:
        if name in declared:
            origins[name] = "declared"
        elif name in ("target_kind",) and ":" in action.id:
            origins[name] = "derived"
        else:
            origins[name] = "default"
    return InspectReport("action", str(file), action.id, fields, origins)


def _tool_report(path: Path, resolver: ActionResolver) -> InspectReport:
    file = path / "TOOL.md" if path.is_dir() else path
    try:
        tool = load_tool(file, resolver=resolver)
    except ToolDefinitionError as exc:
        return InspectReport("tool", str(file), None, diagnostics=exc.diagnostics)
    view = tool.view.to_dict()
    implements = None
    if tool.action is not None:
        implements = {
            "ref": tool.implements,
            "id": tool.action.id,
            "version": tool.action.version,
            "source": str(tool.action.source) if tool.action.source else None,
        }
    return InspectReport(
        "tool",
        str(file),
        tool.id,
        {name: view[name] for name in SAFETY_FIELDS},
        {name: tool.view.origins[name] for name in SAFETY_FIELDS},
        implements,
    )


def _kind_of(path: Path) -> str | None:
    if path.is_dir():
        for name, kind in (("TOOL.md", "tool"), ("ACTION.md", "action")):
            if (path / name).is_file():
                return kind
        return None
    if path.name == "TOOL.md":
        return "tool"
    if path.name == "ACTION.md":
        return "action"
    loaded = load_document(path)
    if loaded.document is not None and loaded.document.kind in (
        DocumentKind.TOOL,
        DocumentKind.ACTION,
    ):
        return loaded.document.kind.value
    return None


def _config_problem(workspace: Path | None) -> tuple[Diagnostic, ...]:
    """Refs resolve through the workspace's `[library] paths`; a config that
    cannot be read would otherwise be skipped in silence."""
    if workspace is None:
        return ()
    try:
        load_config(workspace)
    except ConfigError as exc:
        hint = "refs were resolved without this file's [library] paths"
        return (Diagnostic(exc.code, str(exc), file=str(exc.path), hint=hint),)
    return ()


def inspect_manifest(
    path: str | Path,
    *,
    libraries: Sequence[str | Path] = (),
    workspace: str | Path | None = None,
    strict: bool = False,
) -> InspectReport:
    """Inspect a TOOL.md or ACTION.md (or a folder holding one). Never writes the lock."""
    p = Path(path)
    ws = Path(workspace) if workspace is not None else None
    kind = _kind_of(p)
    if kind == "action":
        return _action_report(p)
    if kind == "tool":
        resolver = ActionResolver(
            libraries=library_search_path(libraries, workspace=ws), workspace=ws, strict=strict
        )
        report = _tool_report(p, resolver)
        return replace(report, diagnostics=(*_config_problem(ws), *report.diagnostics))
    problem = Diagnostic(
        "inspect.not_a_tool_or_action",
        "inspect reads a TOOL.md or an ACTION.md (or a folder holding one)",
        file=str(p),
    )
    return InspectReport("unknown", str(p), None, diagnostics=(problem,))
