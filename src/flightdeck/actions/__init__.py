"""Actions (AIP-39): the verb primitive, references to it, and narrowing.

    action = define_action({"id": "storage:commit", "description": "..."})
    action = load_action(".actions/storage-commit")          # ACTION.md or its folder
    action = resolve_action_ref("@agentik/actions-standard/storage-commit@^1",
                                base_dir=tool_dir, libraries=library_search_path())
    result = check_narrowing(tool_frontmatter, action)         # merged view or violations

Errors are values with codes: `ActionDefinitionError` (diagnostics),
`ActionRefError` (`action_ref_unresolvable` / `action_trust_downgrade`, with
what was tried). `check_document` is the hook `flightdeck validate` calls.
"""

from __future__ import annotations

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
    "LockEntry",
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
    "parse_action_ref",
    "resolve_action_ref",
]
