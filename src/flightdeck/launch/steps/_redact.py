"""Redaction rules of a trust contract: `drop`, `mask`, `hash`.

Applied to an action's result before it enters the step graph or the audit
(seed 003, trustContract.redaction). `mask` keeps the type visible but not
the value; `hash` keeps values joinable (equal inputs, equal digests) without
revealing them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._paths import DROP, rewrite
from flightdeck.launch.core._values import canonical_json, sha256_hex

MASK = "****"
RULES = ("drop", "mask", "hash")


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        # Keep a short tail of long values so an operator can tell them apart.
        return MASK + value[-2:] if len(value) > 8 else MASK
    return MASK


def _hash(value: Any) -> str:
    return "sha256:" + sha256_hex(canonical_json(value))[:16]


def redact(value: Any, rules: Iterable[tuple[str, str]]) -> Any:
    """`value` with every `(field path, rule)` applied, in order."""
    for path, rule in rules:
        if rule == "drop":
            value = rewrite(value, path, lambda _: DROP)
        elif rule == "mask":
            value = rewrite(value, path, _mask)
        elif rule == "hash":
            value = rewrite(value, path, _hash)
        else:
            raise LaunchError("redaction.unknown_rule", f"unknown redaction rule {rule!r}")
    return value
