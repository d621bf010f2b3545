"""Actions (AIP-39): the verb primitive, references to it, and narrowing.

    action = define_action({"id": "storage:commit", "description": "..."})
    action = load_action(".actions/storage-commit")          # ACTION.md or its folder
    action = resolve_action_ref("@agentik/actions-standard/storage-commit@^1",
                                base_dir=tool_dir, libraries=library_search_path())
    result = check_narrowing(tool_frontmatter, action)         # merged view or violations

Errors are values with codes: `ActionDefinitionError` (diagnostics),
`ActionRefError` (`action_ref_unresolvable` / `action_trust_downgrade`, with
what was tried). `check_document` is the hook `flightdeck validate` calls;
`lock_workspace` is what `flightdeck lock` calls.
"""

from __future__ import annotations

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
    from flightdeck.actions._approval import RANKS as APPROVAL_RANKS
    from flightdeck.actions._approval import approval_at_least, is_approval
    from flightdeck.actions._check import CheckContext, check_document, implementor_view
    from flightdeck.actions._define import (
        ActionHandle,
        Implementation,
        Requires,
        define_action,
        defineAction,
    )
    from flightdeck.actions._errors import (
        TRUST_DOWNGRADE,
        UNRESOLVABLE,
        ActionDefinitionError,
        ActionRefError,
        TrustDowngradeWarning,
    )
    from flightdeck.actions._library import ENV_VAR, Library, discover_all, library_search_path
    from flightdeck.actions._load import load_action
    from flightdeck.actions._lock import LOCK_FILE, Lock, LockEntry
    from flightdeck.actions._mutates import covers
    from flightdeck.actions._narrowing import (
        SAFETY_FIELDS,
        VIOLATION_CODES,
        MergedView,
        NarrowingResult,
        check_narrowing,
    )
    from flightdeck.actions._refs import ActionRef, parse_action_ref
    from flightdeck.actions._resolve import ActionResolver, Resolution, resolve_action_ref
    from flightdeck.actions._workspace_lock import LockDrift, LockMode, LockReport, lock_workspace

_LAZY: dict[str, tuple[str, str]] = {
    "APPROVAL_RANKS": ("flightdeck.actions._approval", "RANKS"),
    "approval_at_least": ("flightdeck.actions._approval", "approval_at_least"),
    "is_approval": ("flightdeck.actions._approval", "is_approval"),
    "CheckContext": ("flightdeck.actions._check", "CheckContext"),
    "check_document": ("flightdeck.actions._check", "check_document"),
    "implementor_view": ("flightdeck.actions._check", "implementor_view"),
    "ActionHandle": ("flightdeck.actions._define", "ActionHandle"),
    "Implementation": ("flightdeck.actions._define", "Implementation"),
    "Requires": ("flightdeck.actions._define", "Requires"),
    "define_action": ("flightdeck.actions._define", "define_action"),
    "defineAction": ("flightdeck.actions._define", "defineAction"),
    "TRUST_DOWNGRADE": ("flightdeck.actions._errors", "TRUST_DOWNGRADE"),
    "UNRESOLVABLE": ("flightdeck.actions._errors", "UNRESOLVABLE"),
    "ActionDefinitionError": ("flightdeck.actions._errors", "ActionDefinitionError"),
    "ActionRefError": ("flightdeck.actions._errors", "ActionRefError"),
    "TrustDowngradeWarning": ("flightdeck.actions._errors", "TrustDowngradeWarning"),
    "ENV_VAR": ("flightdeck.actions._library", "ENV_VAR"),
    "Library": ("flightdeck.actions._library", "Library"),
    "discover_all": ("flightdeck.actions._library", "discover_all"),
    "library_search_path": ("flightdeck.actions._library", "library_search_path"),
    "load_action": ("flightdeck.actions._load", "load_action"),
    "LOCK_FILE": ("flightdeck.actions._lock", "LOCK_FILE"),
    "Lock": ("flightdeck.actions._lock", "Lock"),
    "LockEntry": ("flightdeck.actions._lock", "LockEntry"),
    "covers": ("flightdeck.actions._mutates", "covers"),
    "SAFETY_FIELDS": ("flightdeck.actions._narrowing", "SAFETY_FIELDS"),
    "VIOLATION_CODES": ("flightdeck.actions._narrowing", "VIOLATION_CODES"),
    "MergedView": ("flightdeck.actions._narrowing", "MergedView"),
    "NarrowingResult": ("flightdeck.actions._narrowing", "NarrowingResult"),
    "check_narrowing": ("flightdeck.actions._narrowing", "check_narrowing"),
    "ActionRef": ("flightdeck.actions._refs", "ActionRef"),
    "parse_action_ref": ("flightdeck.actions._refs", "parse_action_ref"),
    "ActionResolver": ("flightdeck.actions._resolve", "ActionResolver"),
    "Resolution": ("flightdeck.actions._resolve", "Resolution"),
    "resolve_action_ref": ("flightdeck.actions._resolve", "resolve_action_ref"),
    "LockDrift": ("flightdeck.actions._workspace_lock", "LockDrift"),
    "LockMode": ("flightdeck.actions._workspace_lock", "LockMode"),
    "LockReport": ("flightdeck.actions._workspace_lock", "LockReport"),
    "lock_workspace": ("flightdeck.actions._workspace_lock", "lock_workspace"),
}


__all__ = [
    "APPROVAL_RANKS",
    "ENV_VAR",
    "LOCK_FILE",
    "SAFETY_FIELDS",
    "TRUST_DOWNGRADE",
    "UNRESOLVABLE",
    "VIOLATION_CODES",
    "ActionDefinitionError",
    "ActionHandle",
    "ActionRef",
    "ActionRefError",
    "ActionResolver",
    "CheckContext",
    "Implementation",
    "Library",
    "Lock",
    "LockDrift",
    "LockEntry",
    "LockMode",
    "LockReport",
    "MergedView",
    "NarrowingResult",
    "Requires",
    "Resolution",
    "TrustDowngradeWarning",
    "approval_at_least",
    "check_document",
    "check_narrowing",
    "covers",
    "defineAction",
    "define_action",
    "discover_all",
    "implementor_view",
    "is_approval",
    "library_search_path",
    "load_action",
    "lock_workspace",
    "parse_action_ref",
    "resolve_action_ref",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
