"""Resolving action references to `ActionHandle`s against the workspace and libraries.

Every failure is an `ActionRefError` with code `action_ref_unresolvable` whose
`tried` lists each place looked at, in order. Resolution reads local files
only. Each resolved (non-inline) action is checked against `flightdeck.lock`:
a changed sha256 is a trust downgrade (a warning; an error when strict).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import semantic_version

from flightdeck.actions._define import ActionHandle, define_action
from flightdeck.actions._errors import (
    TRUST_DOWNGRADE,
    UNRESOLVABLE,
    ActionDefinitionError,
    ActionRefError,
    TrustDowngradeWarning,
)
from flightdeck.actions._library import Library, discover_all, frontmatter
from flightdeck.actions._load import action_file, load_action
from flightdeck.actions._lock import Lock, LockEntry
from flightdeck.actions._refs import ActionRef, parse_action_ref
from flightdeck.documents import Diagnostic, Severity

_NO_LIBRARIES = (
    "no action library on the search path (--library, FLIGHTDECK_LIBRARY_PATH, "
    "[library] paths in flightdeck.toml)"
)


@dataclass(frozen=True)
class Resolution:
    action: ActionHandle
    ref: ActionRef
    key: str | None  # the lock key; None for inline actions
    warnings: tuple[Diagnostic, ...] = ()


def _within(root: Path, path: Path) -> bool:
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    return os.path.commonpath([real_root, real]) == real_root


class ActionResolver:
    """Resolves refs for one workspace; libraries are discovered once, lazily."""

    def __init__(
        self,
        *,
        libraries: Sequence[Path] = (),
        workspace: Path | None = None,
        lock: Lock | None = None,
        strict: bool = False,
        relock: bool = False,
    ) -> None:
        self.search_path = tuple(Path(p) for p in libraries)
        self.workspace = workspace.resolve() if workspace is not None else None
        self.lock = lock
        self.strict = strict
        self.relock = relock
        self._libraries: list[Library] | None = None

    @property
    def libraries(self) -> list[Library]:
        if self._libraries is None:
            self._libraries = discover_all(self.search_path)
        return self._libraries

    def resolve(self, value: Any, *, base_dir: Path) -> Resolution:
        ref = parse_action_ref(value)
        if ref.form == "inline":
            assert ref.inline is not None
            return Resolution(define_action(ref.inline), ref, None)
        if ref.form == "file":
            action, key = self._by_file(ref, base_dir)
        elif ref.form == "registry":
            action, key = self._by_address(ref)
        else:
            action, key = self._by_id(ref)
        return Resolution(action, ref, key, self._trust(ref, key, action))

    # -- the three lookups -------------------------------------------------

    def _load(self, ref: ActionRef, file: Path, tried: list[str]) -> ActionHandle:
        try:
            return load_action(file)
        except ActionDefinitionError as exc:
            raise _invalid(ref, file, exc) from None
        except OSError as exc:
            tried.append(f"{file}: unreadable ({exc.strerror})")
        raise ActionRefError(ref.raw, "the action file is not usable", tried)

    def _key_for(self, file: Path) -> str:
        if self.workspace is not None and _within(self.workspace, file):
            return Path(os.path.relpath(file.resolve(), self.workspace)).as_posix()
        return file.resolve().as_posix()

    def _by_file(self, ref: ActionRef, base_dir: Path) -> tuple[ActionHandle, str]:
        tried: list[str] = []
        bases = [base_dir] + ([self.workspace] if self.workspace else [])
        for base in dict.fromkeys(b.resolve() for b in bases):
            file = action_file(base / ref.path)
            if not file.is_file():
                tried.append(f"{base / ref.path} (relative to {base}): no ACTION.md there")
                continue
            if self.workspace is not None and not _within(self.workspace, file):
                tried.append(f"{file}: outside the workspace {self.workspace}, refused")
                continue
            return self._load(ref, file, tried), self._key_for(file)
        raise ActionRefError(ref.raw, "no ACTION.md at that path", tried)

    def _by_address(self, ref: ActionRef) -> tuple[ActionHandle, str]:
        tried: list[str] = []
        refused: list[str] = []
        if not self.libraries:
            tried.append(_NO_LIBRARIES)
        for lib in self.libraries:
            if not lib.answers(ref.owner, ref.workspace):
                names = ", ".join(lib.names) or "no name"
                tried.append(
                    f"library {lib.root} (answers {names}): not @{ref.owner}/{ref.workspace}"
                )
                continue
            file = lib.find_slug(ref.slug)
            if file is None:
                tried.append(f"library {lib.root}: no .actions/{ref.slug}/ACTION.md")
                continue
            action = self._load(ref, file, tried)
            if ref.version_range and not _in_range(action.version, ref.version_range):
                note = f"{file}: version {action.version} is outside the pin {ref.version_range}"
                tried.append(note + ", refused")
                refused.append(note)
                continue
            return action, ref.address
        if refused:
            message = "no version matches the pin " + (ref.version_range or "")
            raise ActionRefError(ref.raw, message, tried)
        raise ActionRefError(ref.raw, f"no library provides {ref.address}", tried)

    def _by_id(self, ref: ActionRef) -> tuple[ActionHandle, str]:
        tried: list[str] = []
        slug = ref.action_id.replace(":", "-")
        places: list[tuple[str, Path]] = []
        if self.workspace is not None:
            places.append(("workspace", self.workspace))
        places += [("library", lib.root) for lib in self.libraries]
        if not self.libraries:
            tried.append(_NO_LIBRARIES)
        for label, root in places:
            found = self._scan_for_id(ref, root, slug)
            if found is not None:
                return self._load(ref, found, tried), f"id:{ref.action_id}"
            tried.append(f"{label} {root}: no .actions/**/ACTION.md with id {ref.action_id}")
        raise ActionRefError(ref.raw, f"no action with id {ref.action_id}", tried)

    def _scan_for_id(self, ref: ActionRef, root: Path, slug: str) -> Path | None:
        """The valid ACTION.md declaring `ref.action_id`. An invalid one that
        declares it (or sits at its slug) is the answer when no valid one
        does: the implementor then says "action X is invalid" and points at
        the file, instead of "no ACTION.md with id X" while the file is there."""
        base = root / ".actions"
        if not base.is_dir():
            return None
        direct = base / slug / "ACTION.md"
        candidates = [direct] if direct.is_file() else []
        candidates += [p for p in sorted(base.rglob("ACTION.md")) if p != direct]
        invalid: tuple[Path, ActionDefinitionError] | None = None
        for path in candidates:
            try:
                if load_action(path).id == ref.action_id:
                    return path
            except ActionDefinitionError as exc:
                if invalid is None and (
                    path == direct or frontmatter(path).get("id") == ref.action_id
                ):
                    invalid = (path, exc)
            except OSError:
                continue
        if invalid is not None:
            raise _invalid(ref, *invalid)
        return None

    # -- trust ----------------------------------------------------------------

    def _trust(
        self, ref: ActionRef, key: str | None, action: ActionHandle
    ) -> tuple[Diagnostic, ...]:
        if self.lock is None or key is None:
            return ()
        entry = LockEntry(
            action.id, action.version, action.sha256, self.lock.relative(action.source)
        )
        old = self.lock.observe(key, entry, relock=self.relock)
        if old is None:
            return ()
        message = (
            f"{key} resolved to content with sha256 {action.sha256[:12]}..., but flightdeck.lock "
            f"records {old.sha256[:12]}... (trust downgrade)"
        )
        if self.strict:
            raise ActionRefError(ref.raw, message, code=TRUST_DOWNGRADE)
        return (
            Diagnostic(
                TRUST_DOWNGRADE,
                message,
                Severity.WARNING,
                hint="review the change, then re-lock with 'flightdeck lock update'",
            ),
        )


def _invalid(ref: ActionRef, file: Path, exc: ActionDefinitionError) -> ActionRefError:
    first = exc.diagnostics[0] if exc.diagnostics else None
    detail = f"{first.code}: {first.message}" if first else "invalid"
    if first is not None and first.file is None:
        first = Diagnostic(first.code, first.message, file=str(file))
    count = len(exc.diagnostics)
    more = f" (and {count - 1} more problem{'s' if count > 2 else ''})" if count > 1 else ""
    return ActionRefError(
        ref.raw,
        f"action {ref.raw} is invalid: {detail}{more}",
        [f"{file}: not a valid action ({', '.join(exc.codes)})"],
        at=first or Diagnostic(UNRESOLVABLE, "invalid", file=str(file)),
    )


def _in_range(version: str, spec: str) -> bool:
    try:
        return bool(semantic_version.NpmSpec(spec).match(semantic_version.Version(version)))
    except ValueError:
        return False


def resolve_action_ref(
    ref: Any,
    *,
    base_dir: str | Path,
    libraries: Sequence[str | Path] = (),
    lock: Lock | None = None,
    strict: bool = False,
    workspace: str | Path | None = None,
) -> ActionHandle:
    """Resolve one action ref to its handle.

    `libraries` is the search path (see `library_search_path`). With a `lock`,
    the resolved sha256 is recorded (and the lock saved); a changed sha256
    emits a `TrustDowngradeWarning`, or raises `ActionRefError`
    (`action_trust_downgrade`) when `strict`. The workspace defaults to the
    lock's folder; bare ids are searched there first.
    """
    ws = Path(workspace) if workspace is not None else (lock.path.parent if lock else None)
    resolver = ActionResolver(
        libraries=[Path(p) for p in libraries], workspace=ws, lock=lock, strict=strict
    )
    result = resolver.resolve(ref, base_dir=Path(base_dir))
    if lock is not None:
        lock.save()
    for diag in result.warnings:
        warnings.warn(diag.message, TrustDowngradeWarning, stacklevel=2)
    return result.action
