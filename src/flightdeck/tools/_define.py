"""`define_tool` / `load_tool`: an AIP-14 TOOL contract as an immutable handle.

The handle carries the tool's IO (an `IOHandle`), the action it implements
(resolved), and the merged safety view after narrowing, with where each
value came from. A tool that widens its action is refused with every
violation listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import semantic_version

from flightdeck.actions import (
    ActionDefinitionError,
    ActionHandle,
    ActionRefError,
    ActionResolver,
    Lock,
    MergedView,
    check_narrowing,
    implementor_view,
    is_approval,
)
from flightdeck.documents import Diagnostic, DocumentKind, Severity, load_document, locate
from flightdeck.io import IODefinitionError, IOHandle, define_io

TOOL_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
REMOVED_FIELDS = ("code", "run", "runner", "secrets", "network", "entry")


class ToolDefinitionError(ValueError):
    """A TOOL that cannot be used; `diagnostics` lists every problem."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        lines = [f"{d.code} at {d.pointer or '/'}: {d.message}" for d in self.diagnostics]
        super().__init__("invalid tool: " + "; ".join(lines))

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]


@dataclass(frozen=True)
class ToolHandle:
    name: str
    id: str
    description: str
    version: str
    io: IOHandle
    view: MergedView  # the safety view after narrowing (mutates, risk, approval, requires)
    implements: Any = None  # the ref as written; None for an orphan
    action: ActionHandle | None = None
    idempotent: bool = False
    cost_class: str = "trivial"
    timeout_ms: int = 30000
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    source: Path | None = None

    @property
    def orphan(self) -> bool:
        return self.action is None

    @property
    def mutates(self) -> tuple[str, ...]:
        return self.view.mutates

    @property
    def risk_level(self) -> int:
        return self.view.risk_level

    @property
    def approval(self) -> str:
        return self.view.approval

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "id": self.id,
            "version": self.version,
            "source": str(self.source) if self.source else None,
            "implements": self.implements,
            "orphan": self.orphan,
            "view": self.view.to_dict(),
            "io": self.io.to_dict(),
        }


def _diag(code: str, message: str, pointer: str) -> Diagnostic:
    return Diagnostic(code, message, pointer=pointer)


def _identity(data: Mapping[str, Any]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    ident = data.get("id")
    if not isinstance(ident, str) or not 2 <= len(ident) <= 80 or not TOOL_ID.match(ident):
        out.append(_diag("tool.invalid_id", f"id {ident!r}: 2-80 of a-z 0-9 . -", "/id"))
    name = data.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 80:
        out.append(_diag("tool.invalid_name", "`name` must be 1-80 characters", "/name"))
    desc = data.get("description")
    if not isinstance(desc, str) or not desc.strip() or len(desc) > 2000:
        out.append(_diag("tool.invalid_description", "`description`: 1-2000 chars", "/description"))
    version = data.get("version")
    if not isinstance(version, str) or not semantic_version.validate(version):
        out.append(_diag("tool.invalid_version", f"version {version!r} is not semver", "/version"))
    risk = data.get("risk_level", 0)
    if isinstance(risk, bool) or not isinstance(risk, int) or not 0 <= risk <= 3:
        out.append(_diag("tool.invalid_risk_level", "risk_level must be 0-3", "/risk_level"))
    if not is_approval(data.get("approval", "auto")):
        out.append(_diag("tool.unknown_approval_class", "unknown approval class", "/approval"))
    for key in REMOVED_FIELDS:
        if key in data:
            out.append(
                _diag("tool.removed_field", f"`{key}` moved to DRIVER.md (AIP-30)", f"/{key}")
            )
    return out


def _io(data: Mapping[str, Any], out: list[Diagnostic]) -> IOHandle:
    try:
        return define_io(data)
    except IODefinitionError as exc:
        out += exc.diagnostics
        return IOHandle()


def define_tool(
    definition: Mapping[str, Any],
    *,
    base_dir: str | Path = ".",
    resolver: ActionResolver | None = None,
    libraries: Sequence[str | Path] = (),
    workspace: str | Path | None = None,
    lock: Lock | None = None,
    strict: bool = False,
    source: Path | None = None,
) -> ToolHandle:
    """Build a `ToolHandle`; `implements` is resolved with `resolver` (or one made
    from `libraries` / `workspace` / `lock` / `strict`). Raises `ToolDefinitionError`."""
    data = dict(definition)
    diags = _identity(data)
    io = _io(data, diags)
    ref = data.get("implements")
    action: ActionHandle | None = None
    if ref is not None:
        resolver = resolver or ActionResolver(
            libraries=[Path(p) for p in libraries],
            workspace=Path(workspace) if workspace is not None else None,
            lock=lock,
            strict=strict,
        )
        try:
            action = resolver.resolve(ref, base_dir=Path(base_dir)).action
        except ActionRefError as exc:
            diags.append(Diagnostic(exc.code, str(exc), pointer="/implements"))
        except ActionDefinitionError as exc:
            diags += [
                Diagnostic(d.code, d.message, pointer="/implements/inline" + d.pointer)
                for d in exc.diagnostics
            ]
    narrowing = check_narrowing(implementor_view(data), action)
    diags += narrowing.violations
    if any(d.severity is Severity.ERROR for d in diags) or narrowing.merged is None:
        raise ToolDefinitionError(diags)
    return ToolHandle(
        name=data["name"],
        id=data["id"],
        description=data["description"],
        version=data["version"],
        io=io,
        view=narrowing.merged,
        implements=ref,
        action=action,
        idempotent=bool(data.get("idempotent", False)),
        cost_class=str(data.get("cost_class", "trivial")),
        timeout_ms=int(data.get("timeout_ms", 30000)),
        tags=tuple(str(t) for t in data.get("tags", []) or []),
        metadata=MappingProxyType(dict(data.get("metadata", {}) or {})),
        source=source,
    )


defineTool = define_tool


def tool_file(path: str | Path) -> Path:
    p = Path(path)
    return p / "TOOL.md" if p.is_dir() else p


def load_tool(
    path: str | Path,
    *,
    resolver: ActionResolver | None = None,
    libraries: Sequence[str | Path] = (),
    workspace: str | Path | None = None,
    lock: Lock | None = None,
    strict: bool = False,
) -> ToolHandle:
    """Load a TOOL.md (or its folder). Raises `ToolDefinitionError` with located diagnostics."""
    file = tool_file(path)
    result = load_document(file, kind=DocumentKind.TOOL)
    errors = [d for d in result.diagnostics if d.is_error]
    if result.document is None or errors:
        raise ToolDefinitionError(errors or list(result.diagnostics))
    doc = result.document
    try:
        return define_tool(
            doc.data,
            base_dir=file.parent,
            resolver=resolver,
            libraries=libraries,
            workspace=workspace,
            lock=lock,
            strict=strict,
            source=file.resolve(),
        )
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(
            list(locate(exc.diagnostics, str(file), doc.source_map))
        ) from None
