"""Inheritance with narrowing (AIP-39): the implementor's view merged over its action.

An implementor (a TOOL, or a driver's `implements[]` entry) inherits every
field it does not declare. What it declares may only narrow: `mutates`,
`requires.*` and `fires_events` must include the action's entries,
`risk_level` may only rise, `approval` may only get stricter, and
`category` / `target_kind` cannot change. Every violation is reported at
once, each with its own code and the implementor-relative JSON pointer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from flightdeck.actions._approval import approval_at_least, is_approval, stricter
from flightdeck.actions._define import REQUIRES_KEYS, ActionHandle, Requires
from flightdeck.actions._mutates import uncovered
from flightdeck.documents import Diagnostic, pointer_join

VIOLATION_CODES = (
    "drops_mutates",
    "lowers_risk_level",
    "relaxes_approval",
    "drops_required_network",
    "drops_required_secrets",
    "drops_required_tools",
    "drops_fired_event",
    "overrides_category",
    "overrides_target_kind",
)
_ALIASES = {"riskLevel": "risk_level", "firesEvents": "fires_events", "targetKind": "target_kind"}

ACTION, IMPLEMENTOR, BOTH, DEFAULT = "action", "implementor", "action+implementor", "default"

# The safety fields of a merged view, in display order: what an action floors
# and an implementor may only narrow. Inspect views and implementor checks
# read this one list.
SAFETY_FIELDS = (
    "mutates",
    "risk_level",
    "approval",
    "requires",
    "fires_events",
    "category",
    "target_kind",
)


@dataclass(frozen=True)
class MergedView:
    """What governance sees: the action's floors with the implementor's narrowing.

    `origins[field]` says where each value came from: `action`,
    `implementor`, `action+implementor` (a union or an equal value) or `default`.
    """

    description: str
    mutates: tuple[str, ...]
    risk_level: int
    approval: str
    requires: Requires
    fires_events: tuple[str, ...]
    category: str
    target_kind: str
    action_id: str | None = None
    action_version: str | None = None
    action_source: str | None = None
    origins: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action_id,
            "action_version": self.action_version,
            "action_source": self.action_source,
            "description": self.description,
            "mutates": list(self.mutates),
            "risk_level": self.risk_level,
            "approval": self.approval,
            "requires": self.requires.to_dict(),
            "fires_events": list(self.fires_events),
            "category": self.category,
            "target_kind": self.target_kind,
            "origins": dict(self.origins),
        }


@dataclass(frozen=True)
class NarrowingResult:
    """`merged` is None when there are violations; `orphan` when there is no action."""

    merged: MergedView | None
    violations: tuple[Diagnostic, ...] = ()
    orphan: bool = False

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.violations]


def _view(implementor: Mapping[str, Any]) -> dict[str, Any]:
    return {_ALIASES.get(k, k): v for k, v in implementor.items()}


def _strings(value: Any) -> tuple[str, ...] | None:
    """A declared list of strings, or None when absent / not a list (inherit)."""
    if not isinstance(value, (list, tuple)):
        return None
    return tuple(v for v in value if isinstance(v, str))


def _union(floor: Sequence[str], extra: Sequence[str] | None) -> tuple[str, ...]:
    out = list(floor)
    out += [e for e in extra or () if e not in out]
    return tuple(out)


def _violation(code: str, message: str, *where: str) -> Diagnostic:
    return Diagnostic(code, message, pointer=pointer_join("", *where))


def _check_lists(view: dict[str, Any], action: ActionHandle, out: list[Diagnostic]) -> None:
    mutates = _strings(view.get("mutates"))
    if mutates is not None:
        for entry in uncovered(action.mutates, mutates):
            out.append(
                _violation(
                    "drops_mutates",
                    f"action {action.id} mutates {entry!r}; no implementor entry covers it",
                    "mutates",
                )
            )
    requires = view.get("requires")
    if isinstance(requires, Mapping):
        for key in REQUIRES_KEYS:
            declared = _strings(requires.get(key))
            if declared is None:
                continue
            for need in getattr(action.requires, key):
                if need not in declared:
                    out.append(
                        _violation(
                            f"drops_required_{key}",
                            f"action {action.id} requires {key} {need!r}; the implementor drops it",
                            "requires",
                            key,
                        )
                    )
    fires = _strings(view.get("fires_events"))
    if fires is not None:
        for event in action.fires_events:
            if event not in fires:
                out.append(
                    _violation(
                        "drops_fired_event",
                        f"action {action.id} fires {event!r}; the implementor drops it",
                        "fires_events",
                    )
                )


def _check_scalars(view: dict[str, Any], action: ActionHandle, out: list[Diagnostic]) -> None:
    risk = view.get("risk_level")
    if isinstance(risk, int) and not isinstance(risk, bool) and risk < action.risk_level:
        out.append(
            _violation(
                "lowers_risk_level",
                f"risk_level {risk} is below the action's floor {action.risk_level}",
                "risk_level",
            )
        )
    approval = view.get("approval")
    if is_approval(approval) and not approval_at_least(approval, action.approval):
        out.append(
            _violation(
                "relaxes_approval",
                f"approval {approval!r} is weaker than the action's {action.approval!r}",
                "approval",
            )
        )
    for name in ("category", "target_kind"):
        value = view.get(name)
        if isinstance(value, str) and value != getattr(action, name):
            out.append(
                _violation(
                    f"overrides_{name}",
                    f"{name} {value!r} differs from the action's {getattr(action, name)!r}",
                    name,
                )
            )


def _merge(view: dict[str, Any], action: ActionHandle | None) -> MergedView:
    base = action or ActionHandle(id="orphan", description="")
    origins: dict[str, str] = {}

    def pick(name: str, declared: Any, floor: Any, merged: Any) -> Any:
        if declared is None:
            origins[name] = ACTION if action is not None else DEFAULT
        elif action is None or merged != floor:
            origins[name] = IMPLEMENTOR
        else:
            origins[name] = BOTH
        return merged

    d_mut, d_fire = _strings(view.get("mutates")), _strings(view.get("fires_events"))
    risk = view.get("risk_level") if isinstance(view.get("risk_level"), int) else None
    approval = view.get("approval") if is_approval(view.get("approval")) else None
    raw_req = view.get("requires") if isinstance(view.get("requires"), Mapping) else {}
    req_parts = {k: _strings(raw_req.get(k)) for k in REQUIRES_KEYS}  # type: ignore[union-attr]
    requires = Requires(*(_union(getattr(base.requires, k), req_parts[k]) for k in REQUIRES_KEYS))
    declared_req = None if all(v is None for v in req_parts.values()) else req_parts
    desc = view.get("description") if isinstance(view.get("description"), str) else None
    return MergedView(
        description=pick("description", desc, base.description, desc or base.description),
        mutates=pick("mutates", d_mut, base.mutates, _union(base.mutates, d_mut)),
        risk_level=pick("risk_level", risk, base.risk_level, max(base.risk_level, risk or 0)),
        approval=pick(
            "approval", approval, base.approval, stricter(base.approval, approval or base.approval)
        ),
        requires=pick("requires", declared_req, base.requires, requires),
        fires_events=pick(
            "fires_events", d_fire, base.fires_events, _union(base.fires_events, d_fire)
        ),
        # category and target_kind are inherited verbatim; an orphan keeps its own.
        category=pick("category", None, base.category, base.category)
        if action
        else pick("category", view.get("category"), "", str(view.get("category") or "")),
        target_kind=pick("target_kind", None, base.target_kind, base.target_kind)
        if action
        else pick("target_kind", view.get("target_kind"), "", str(view.get("target_kind") or "")),
        action_id=action.id if action else None,
        action_version=action.version if action else None,
        action_source=str(action.source) if action and action.source else None,
        origins=MappingProxyType(origins),
    )


def check_narrowing(
    implementor_view: Mapping[str, Any], action: ActionHandle | None
) -> NarrowingResult:
    """Check an implementor against its action; every violation at once.

    `implementor_view` holds the implementor's own declarations (snake or camel
    case): mutates, risk_level, approval, requires, fires_events, category,
    target_kind, description. Absent fields are inherited. `action=None`
    means the implementor declares no `implements`: an orphan, valid.
    """
    view = _view(implementor_view)
    if action is None:
        return NarrowingResult(_merge(view, None), (), orphan=True)
    violations: list[Diagnostic] = []
    _check_lists(view, action, violations)
    _check_scalars(view, action, violations)
    if violations:
        return NarrowingResult(None, tuple(violations))
    return NarrowingResult(_merge(view, action))
