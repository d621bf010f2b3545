"""Coverage between `mutates` entries (`<class>:<scope>`).

An implementor entry covers an action entry when it is equal to it or
broader: `storage:*` covers `storage:scratch`; `*` covers everything;
glob patterns (`workspace:/notes/*`) cover what they match; a scope ending
in `/` covers everything below it. A narrower entry never covers a broader
one (`storage:scratch` does not cover `storage:*`).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase


def covers(broad: str, narrow: str) -> bool:
    if broad == narrow or broad in ("*", "*:*"):
        return True
    b_class, _, b_scope = broad.partition(":")
    n_class, _, n_scope = narrow.partition(":")
    if b_class != n_class and b_class != "*":
        return False
    if b_scope == "*":
        return True
    if b_scope.endswith("/") and n_scope.startswith(b_scope):
        return True
    # The narrow entry is matched literally (its own `*` is a character to the
    # broad pattern), so `storage:*` is covered only by `storage:*` or wider.
    return any(ch in b_scope for ch in "*?[") and fnmatchcase(n_scope, b_scope)


def uncovered(floor: Iterable[str], entries: Iterable[str]) -> list[str]:
    """Floor entries no implementor entry covers, in floor order."""
    have = list(entries)
    return [need for need in floor if not any(covers(e, need) for e in have)]
