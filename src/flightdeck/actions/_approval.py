"""Approval classes and their order.

The spec's table writes "auto → always → on-mutate", but its own definitions
make `on-mutate` (prompt only when something is mutated) weaker than `always`
(prompt every call). flightdeck settles on auto < on-mutate < always.
`policy:<ref>` defers to a named policy whose strength is unknown here, so an
implementor of a `policy:<ref>` action may only keep that same policy or
narrow to `always`; an implementor may choose `policy:<ref>` only over `auto`.
"""

from __future__ import annotations

import re
from typing import TypeGuard

RANKS = {"auto": 0, "on-mutate": 1, "always": 2}
_POLICY = re.compile(r"^policy:[A-Za-z0-9_./@-]+$")


def is_approval(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and (value in RANKS or bool(_POLICY.match(value)))


def is_policy(value: str) -> bool:
    return value.startswith("policy:")


def approval_at_least(implementor: str, floor: str) -> bool:
    """Whether `implementor` is the same as or stricter than `floor`."""
    if implementor == floor:
        return True
    if is_policy(floor):
        return implementor == "always"
    if is_policy(implementor):
        return floor == "auto"
    return RANKS[implementor] >= RANKS[floor]


def stricter(a: str, b: str) -> str:
    """The stricter of two approvals (`a` when neither dominates)."""
    return b if approval_at_least(b, a) and not approval_at_least(a, b) else a
