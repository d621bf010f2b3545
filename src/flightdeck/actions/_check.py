"""The `validate` hook: check every implementor in a document against its action.

TOOL documents: the tool's `implements` is resolved (relative to the tool's
folder, then the workspace) and the tool's own `mutates` / `risk_level` /
`approval` / `requires` are checked against the action's floors.

DRIVER documents (AIP-30): an `implements[]` entry binds a TOOL contract
(`tool:` path or id); the entry's action is the action that TOOL implements,
and the entry's own safety fields (AIP-30 declares none, so normally it
inherits everything) are checked against it. Entries whose TOOL cannot be
found locally are left to the drivers layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.actions._errors import ActionDefinitionError, ActionRefError
from flightdeck.actions._library import library_search_path
from flightdeck.actions._lock import LOCK_FILE, Lock
from flightdeck.actions._narrowing import SAFETY_FIELDS, NarrowingResult, check_narrowing
from flightdeck.actions._resolve import ActionResolver, Resolution
from flightdeck.documents import (
    Diagnostic,
    Document,
    DocumentKind,
    Severity,
    load_document,
    locate,
    manifest_id,
    pointer_join,
)

_WORKSPACE_MARKERS = ("flightdeck.toml", LOCK_FILE, "WORKSPACE.md")
VIEW_FIELDS = ("description", *SAFETY_FIELDS)


@dataclass
class CheckContext:
    """What implementor checks need.

    `libraries` are the `--library` flags; the environment variable and the
    workspace's `[library] paths` are appended unless `extend_search_path`
    is false. `lock` defaults to `<workspace>/flightdeck.lock` when the
    workspace has a flightdeck.toml, a flightdeck.lock or a WORKSPACE.md.
    The lock is read, never written: `flightdeck lock` owns the file.
    """

    workspace: Path | None = None
    libraries: Sequence[Path] = ()
    strict: bool = False
    lock: Lock | None = None
    extend_search_path: bool = True
    _resolver: ActionResolver | None = field(default=None, init=False, repr=False)

    def resolver(self) -> ActionResolver:
        if self._resolver is None:
            ws = self.workspace.resolve() if self.workspace is not None else None
            paths = (
                library_search_path(self.libraries, workspace=ws)
                if self.extend_search_path
                else tuple(Path(p) for p in self.libraries)
            )
            lock = self.lock
            if (
                lock is None
                and ws is not None
                and any((ws / m).exists() for m in _WORKSPACE_MARKERS)
            ):
                lock = Lock.for_workspace(ws)
            self.lock = lock
            self._resolver = ActionResolver(
                libraries=paths, workspace=ws, lock=lock, strict=self.strict
            )
        return self._resolver


def implementor_view(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an implementor that narrowing looks at."""
    return {k: data[k] for k in VIEW_FIELDS if k in data}


def resolve_for(
    ref: Any, base_dir: Path, context: CheckContext, pointer: str
) -> tuple[Resolution | None, list[Diagnostic]]:
    """Resolve a ref; failures become diagnostics at `pointer`."""
    try:
        found = context.resolver().resolve(ref, base_dir=base_dir)
    except ActionRefError as exc:
        if exc.at is not None:
            # One mistake, one diagnostic: the implementor points at the
            # invalid action's own file:line, where the fix goes.
            at = exc.at
            hint = "fix that ACTION.md; this implementor is checked against it once it is valid"
            located = Diagnostic(
                exc.code, exc.reason, file=at.file, line=at.line, column=at.column, hint=hint
            )
            return None, [located]
        return None, [Diagnostic(exc.code, str(exc), Severity.ERROR, pointer=pointer)]
    except ActionDefinitionError as exc:  # an invalid inline action
        inline = pointer_join(pointer, "inline")
        return None, [
            Diagnostic(d.code, d.message, d.severity, pointer=inline + d.pointer, hint=d.hint)
            for d in exc.diagnostics
        ]
    moved = [
        Diagnostic(d.code, d.message, d.severity, pointer=pointer, hint=d.hint)
        for d in found.warnings
    ]
    return found, moved


def narrowing_diagnostics(result: NarrowingResult, prefix: str, orphan_at: str) -> list[Diagnostic]:
    if result.orphan:
        return [
            Diagnostic(
                "orphan_implementor",
                "implements no action: usable, but not policy-grantable as a group",
                Severity.INFO,
                pointer=orphan_at,
            )
        ]
    return [
        Diagnostic(d.code, d.message, d.severity, pointer=prefix + d.pointer, hint=d.hint)
        for d in result.violations
    ]


def _check_tool(doc: Document, context: CheckContext) -> list[Diagnostic]:
    data = doc.data
    base = doc.path.parent if doc.path else (context.workspace or Path.cwd())
    ref = data.get("implements")
    if ref is None:
        return narrowing_diagnostics(check_narrowing(implementor_view(data), None), "", "/id")
    found, diags = resolve_for(ref, base, context, "/implements")
    if found is not None:
        diags += narrowing_diagnostics(
            check_narrowing(implementor_view(data), found.action), "", ""
        )
    return diags


def _find_tool(tool: str, driver_dir: Path, context: CheckContext) -> Path | None:
    """A TOOL.md by path (driver folder, then workspace) or by id (workspace `.tools/`)."""
    bases = [driver_dir] + ([context.workspace] if context.workspace else [])
    for base in bases:
        candidate = base / tool
        if candidate.is_dir():
            candidate = candidate / "TOOL.md"
        if candidate.is_file():
            return candidate
    tools_dir = context.workspace / ".tools" if context.workspace else None
    if "/" in tool or tools_dir is None or not tools_dir.is_dir():
        return None
    for path in sorted(tools_dir.rglob("TOOL.md")):
        if manifest_id(path, DocumentKind.TOOL) == tool:
            return path
    return None


def _check_driver(doc: Document, context: CheckContext) -> list[Diagnostic]:
    entries = doc.data.get("implements")
    base = doc.path.parent if doc.path else (context.workspace or Path.cwd())
    diags: list[Diagnostic] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("tool"), str):
            continue
        where = pointer_join("/implements", i)
        tool_file = _find_tool(entry["tool"], base, context)
        if tool_file is None:
            continue
        loaded = load_document(tool_file, kind=DocumentKind.TOOL)
        if loaded.document is None:
            continue
        tool_ref = loaded.document.data.get("implements")
        view = implementor_view(entry)
        if tool_ref is None:
            diags += narrowing_diagnostics(check_narrowing(view, None), where, where)
            continue
        found, problems = resolve_for(
            tool_ref, tool_file.parent, context, pointer_join(where, "tool")
        )
        diags += problems
        if found is not None:
            diags += narrowing_diagnostics(check_narrowing(view, found.action), where, where)
    return diags


def check_document(document: Document, context: CheckContext) -> list[Diagnostic]:
    """Implementor checks for one TOOL or DRIVER document, located at its file:line."""
    if document.kind is DocumentKind.TOOL:
        diags = _check_tool(document, context)
    elif document.kind is DocumentKind.DRIVER:
        diags = _check_driver(document, context)
    else:
        return []
    # The lock is only read here (trust downgrades); `flightdeck lock` writes it.
    path = str(document.path) if document.path else None
    return list(locate(diags, path, document.source_map))
