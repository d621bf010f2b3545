"""`flightdeck lock create | update | check`: the one writer of flightdeck.lock.

Every implementor (TOOL, DRIVER) under the workspace is resolved afresh into
an empty lock, through the same checks `validate` runs, so the lock records
exactly what the workspace resolves today. `check` compares that with the
file and writes nothing; `create` refuses an existing file (it would silently
accept changed content); `update` replaces the file on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from flightdeck.actions._check import CheckContext, check_document
from flightdeck.actions._errors import UNRESOLVABLE
from flightdeck.actions._lock import LOCK_FILE, Lock, LockEntry
from flightdeck.config import ConfigError, load_config
from flightdeck.documents import Diagnostic, DocumentKind, load_document, scan_paths


class LockMode(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    CHECK = "check"


@dataclass(frozen=True)
class LockDrift:
    """One difference between the file and what the workspace resolves."""

    key: str
    change: str  # "missing" (not in the file) | "changed" (other sha256) | "stale"
    locked: str | None  # sha256 in the file
    resolved: str | None  # sha256 resolved now

    def describe(self) -> str:
        if self.change == "missing":
            return f"{self.key}: resolved but not in {LOCK_FILE}"
        if self.change == "stale":
            return f"{self.key}: in {LOCK_FILE} but no implementor resolves it"
        return (
            f"{self.key}: {LOCK_FILE} has sha256 {str(self.locked)[:12]}..., "
            f"the workspace resolves {str(self.resolved)[:12]}..."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "change": self.change,
            "locked": self.locked,
            "resolved": self.resolved,
        }


@dataclass(frozen=True)
class LockReport:
    path: Path
    mode: LockMode
    entries: dict[str, LockEntry]
    drift: tuple[LockDrift, ...] = ()
    problems: tuple[Diagnostic, ...] = ()  # refs that did not resolve
    error: Diagnostic | None = None  # why nothing was done
    written: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.problems and not self.drift

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "mode": self.mode.value,
            "path": str(self.path),
            "written": self.written,
            "entries": {k: v.to_dict() for k, v in sorted(self.entries.items())},
            "drift": [d.to_dict() for d in self.drift],
            "problems": [d.to_dict() for d in self.problems],
            "error": self.error.to_dict() if self.error else None,
        }


def lock_workspace(
    workspace: str | Path,
    mode: LockMode | str,
    *,
    libraries: Sequence[str | Path] = (),
) -> LockReport:
    """Resolve every implementor's action under `workspace`, then create,
    update or check `<workspace>/flightdeck.lock`. Never raises for bad input."""
    mode = LockMode(mode)
    root = Path(workspace).resolve()
    path = root / LOCK_FILE
    try:
        load_config(root)  # its [library] paths decide what refs resolve to
    except ConfigError as exc:
        error = Diagnostic(exc.code, str(exc), file=str(exc.path), hint="fix flightdeck.toml first")
        return LockReport(path, mode, {}, error=error)
    fresh = Lock.empty(path)
    problems = _resolve_all(root, fresh, [Path(p) for p in libraries])
    resolved = fresh.entries()
    report = LockReport(path, mode, resolved, problems=problems)
    if mode is LockMode.CHECK:
        if not path.is_file():
            return _refuse(
                report, "lock.missing", f"{path} does not exist", "flightdeck lock create"
            )
        return LockReport(path, mode, resolved, _drift(Lock(path).entries(), resolved), problems)
    if problems:
        return _refuse(report, "lock.unresolved", "some action refs did not resolve", None)
    if mode is LockMode.CREATE and path.exists():
        return _refuse(report, "lock.exists", f"{path} already exists", "flightdeck lock update")
    try:
        fresh.write(resolved)
    except OSError as exc:
        return _refuse(report, "lock.unwritable", f"cannot write {path}: {exc.strerror}", None)
    return LockReport(path, mode, resolved, problems=problems, written=True)


def _refuse(report: LockReport, code: str, message: str, instead: str | None) -> LockReport:
    hint = f"run '{instead}'" if instead else None
    error = Diagnostic(code, message, file=str(report.path), hint=hint)
    return replace(report, error=error)


def _resolve_all(root: Path, lock: Lock, libraries: list[Path]) -> tuple[Diagnostic, ...]:
    context = CheckContext(workspace=root, libraries=libraries, lock=lock)
    problems: list[Diagnostic] = []
    for entry in scan_paths([root]):
        loaded = load_document(entry.path)
        document = loaded.document
        if document is None or document.kind not in (DocumentKind.TOOL, DocumentKind.DRIVER):
            continue
        problems += [d for d in check_document(document, context) if d.code == UNRESOLVABLE]
    return tuple(problems)


def _drift(locked: dict[str, LockEntry], resolved: dict[str, LockEntry]) -> tuple[LockDrift, ...]:
    out: list[LockDrift] = []
    for key in sorted(set(locked) | set(resolved)):
        old, new = locked.get(key), resolved.get(key)
        if old is None and new is not None:
            out.append(LockDrift(key, "missing", None, new.sha256))
        elif new is None and old is not None:
            out.append(LockDrift(key, "stale", old.sha256, None))
        elif old is not None and new is not None and old.sha256 != new.sha256:
            out.append(LockDrift(key, "changed", old.sha256, new.sha256))
    return tuple(out)
