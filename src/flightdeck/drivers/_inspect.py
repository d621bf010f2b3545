"""`inspect_driver`: the safety view of a DRIVER.md, read from manifests only.

The driver's identity, then per `implements[]` entry: the bound TOOL, its
action, and the entry's own safety fields narrowed over the tool's merged
view, each value with where it came from (`action`, `tool`, `entry`, or a
`+` of those when they agree). Like `flightdeck validate`, nothing is
imported: the package is never loaded, so inspecting a driver has no side
effects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flightdeck.actions import (
    SAFETY_FIELDS,
    ActionHandle,
    MergedView,
    check_narrowing,
    implementor_view,
)
from flightdeck.documents import Diagnostic, DocumentKind, Severity, load_document, locate
from flightdeck.drivers._check import check_document
from flightdeck.drivers._manifest import EntrySpec, compile_manifest
from flightdeck.drivers._register import infer_workspace
from flightdeck.drivers._tools import load_bound_tool
from flightdeck.tools import ToolHandle

# The tool's own origins, renamed for a view one level further down.
_TOOL_ORIGIN = {"implementor": "tool", "action+implementor": "action+tool"}


@dataclass(frozen=True)
class DriverEntryView:
    """One `implements[]` entry: the TOOL it binds and what governance sees."""

    index: int
    tool_ref: str  # as written in the entry
    tool_id: str | None = None
    tool_file: str | None = None
    action: dict[str, Any] | None = None  # {"id", "version", "source"}; None for an orphan tool
    fields: dict[str, Any] = field(default_factory=dict)  # empty when the view has violations
    origins: dict[str, str] = field(default_factory=dict)
    binding: dict[str, Any] = field(default_factory=dict)  # the SDK call, as declared

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "tool": {"ref": self.tool_ref, "id": self.tool_id, "file": self.tool_file},
            "action": self.action,
            "view": {
                name: {"value": self.fields[name], "from": self.origins.get(name)}
                for name in self.fields
            },
            "binding": self.binding,
        }


@dataclass(frozen=True)
class DriverInspectReport:
    path: str
    id: str | None
    identity: dict[str, Any] = field(default_factory=dict)
    entries: tuple[DriverEntryView, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    kind: str = "driver"

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "id": self.id,
            "identity": self.identity,
            "implements": [e.to_dict() for e in self.entries],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "ok": self.ok,
        }


def _identity(data: Mapping[str, Any]) -> dict[str, Any]:
    network = data.get("network")
    check = data.get("version_check")
    version_range = data.get("package_version")
    if version_range is None and isinstance(check, Mapping):
        version_range = check.get("range")
    return {
        "id": data.get("id"),
        "kind": data.get("kind"),
        "version": data.get("version"),
        "package": data.get("package"),
        "package_manager": data.get("package_manager"),
        "version_range": version_range,
        "policy_tags": list(data.get("policy_tags") or []),
        "region": list(data.get("region") or []),
        "egress": list(network.get("egress") or []) if isinstance(network, Mapping) else [],
    }


def _binding(spec: EntrySpec, entry: Mapping[str, Any]) -> dict[str, Any]:
    meta = entry.get("metadata")
    sdk = meta.get("sdk") if isinstance(meta, Mapping) else None
    extract = sdk.get("result_extract") if isinstance(sdk, Mapping) else None
    return {
        "function_ref": spec.function_ref,
        "args_template": spec.args is not None,
        "result_extract": extract if isinstance(extract, str) else None,
        "streaming": spec.streaming,
    }


def _floor(tool: ToolHandle) -> ActionHandle:
    """The tool's merged view as the floor the entry narrows: its action, as narrowed."""
    view: MergedView = tool.view
    base = tool.action or ActionHandle(id=tool.id, description=view.description)
    label = f"{base.id} as narrowed by tool {tool.id}" if tool.action else f"of tool {tool.id}"
    return replace(
        base,
        id=label,
        mutates=view.mutates,
        risk_level=view.risk_level,
        approval=view.approval,
        requires=view.requires,
        fires_events=view.fires_events,
        category=view.category,
        target_kind=view.target_kind,
    )


def _origin(entry_origin: str, tool_origin: str) -> str:
    tool_side = _TOOL_ORIGIN.get(tool_origin, tool_origin)
    if entry_origin == "implementor":
        return "entry"
    if entry_origin == "action+implementor":
        return f"{tool_side}+entry"
    return tool_side


def _entry_view(
    spec: EntrySpec, entry: Mapping[str, Any], tool: ToolHandle
) -> tuple[DriverEntryView, list[Diagnostic]]:
    result = check_narrowing(implementor_view(entry), _floor(tool))
    # The floor is the tool's view, not the bare action: say so, as messages say "action".
    floor = f"the floor is tool {tool.id}'s merged view (its action as the tool narrowed it)"
    problems = [
        replace(d, pointer=spec.pointer + d.pointer, hint=d.hint or floor)
        for d in result.violations
    ]
    action = None
    if tool.action is not None:
        src = tool.action.source
        action = {
            "id": tool.action.id,
            "version": tool.action.version,
            "source": str(src) if src else None,
        }
    fields: dict[str, Any] = {}
    origins: dict[str, str] = {}
    if result.merged is not None:
        merged = result.merged.to_dict()
        for name in SAFETY_FIELDS:
            fields[name] = merged[name]
            origins[name] = _origin(
                result.merged.origins.get(name, ""), tool.view.origins.get(name, "default")
            )
    view = DriverEntryView(
        index=spec.index,
        tool_ref=spec.tool,
        tool_id=tool.id,
        tool_file=str(tool.source) if tool.source else None,
        action=action,
        fields=fields,
        origins=origins,
        binding=_binding(spec, entry),
    )
    return view, problems


def inspect_driver(
    path: str | Path,
    *,
    libraries: Sequence[str | Path] = (),
    workspace: str | Path | None = None,
) -> DriverInspectReport:
    """Inspect a DRIVER.md (or its folder) without importing its package."""
    p = Path(path)
    file = p / "DRIVER.md" if p.is_dir() else p
    loaded = load_document(file, kind=DocumentKind.DRIVER)
    document = loaded.document
    if document is None:
        return DriverInspectReport(str(file), None, diagnostics=loaded.diagnostics)
    data = document.data
    diags = [*loaded.diagnostics, *check_document(document)]
    report = DriverInspectReport(str(file), data.get("id"), _identity(data))
    if data.get("kind") != "sdk":
        note = Diagnostic(
            "inspect.driver_kind_not_sdk",
            f"only SDK drivers' bindings are shown; this driver is kind {data.get('kind')!r}",
            Severity.INFO,
        )
        return replace(report, diagnostics=(*diags, *locate([note], str(file), None)))
    ws = Path(workspace) if workspace is not None else infer_workspace(file.resolve())
    compiled, _ = compile_manifest(data)  # its problems are check_document's, above
    raw = data.get("implements") or []
    entries: list[DriverEntryView] = []
    bound: list[Diagnostic] = []
    for spec in compiled.entries:
        tool, problems = load_bound_tool(spec, file.resolve().parent, ws, libraries)
        bound += problems
        if tool is None:
            entries.append(
                DriverEntryView(spec.index, spec.tool, binding=_binding(spec, raw[spec.index]))
            )
            continue
        view, problems = _entry_view(spec, raw[spec.index], tool)
        entries.append(view)
        bound += problems
    located = locate(bound, str(file), document.source_map)
    return replace(report, entries=tuple(entries), diagnostics=(*diags, *located))
