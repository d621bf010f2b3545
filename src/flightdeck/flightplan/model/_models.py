"""Typed, frozen views of a Flight Plan's frontmatter.

The JSON Schema is the one source of truth for shape; these models only read
already-validated data. The reader is lenient on purpose: a value of the wrong
type is skipped (or read as empty), never a crash, so lint can run on data the
schema rejected and still report everything else. `index` fields keep each
item's position in its array so checks can build JSON pointers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flightdeck.flightplan.model._bindings import Binding, parse_binding
from flightdeck.flightplan.model._graph import StepGraph
from flightdeck.flightplan.model._lock import Lock
from flightdeck.flightplan.model._tokens import scan, string_form
from flightdeck.flightplan.model._values import _list, _map, _str, _strs

STEP_KINDS = ("action-call", "transform", "tool", "llm-seam")


@dataclass(frozen=True)
class TrustContract:
    """A per-action (or per-tool-step) trust contract. `raw` keeps every field."""

    raw: Mapping[str, Any]
    credential_kind: str | None = None
    placement: str | None = None
    identity_label: str | None = None
    hosts: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    effect: str | None = None
    safe_to_retry: bool = False
    idempotency_key: bool = False
    redaction: tuple[tuple[str, str], ...] = ()  # (field path, rule)
    audit_fields: tuple[str, ...] = ()
    audit_sink: str | None = None

    @classmethod
    def read(cls, value: object) -> TrustContract | None:
        if not isinstance(value, dict):
            return None
        credential = _map(value.get("credential"))
        idempotency = _map(value.get("idempotency"))
        audit = _map(value.get("audit"))
        rules = tuple(
            (rule["field"], rule["rule"])
            for rule in _list(value.get("redaction"))
            if isinstance(rule, dict)
            and isinstance(rule.get("field"), str)
            and isinstance(rule.get("rule"), str)
        )
        return cls(
            raw=value,
            credential_kind=_str(credential.get("kind")),
            placement=_str(credential.get("placement")),
            identity_label=_str(credential.get("identityLabel")),
            hosts=_strs(value.get("hosts")),
            paths=_strs(value.get("paths")),
            effect=_str(value.get("effect")),
            safe_to_retry=idempotency.get("safeToRetry") is True,
            idempotency_key=idempotency.get("idempotencyKey") is True,
            redaction=rules,
            audit_fields=_strs(audit.get("fields")),
            audit_sink=_str(audit.get("sink")),
        )


@dataclass(frozen=True)
class ActionRequirement:
    index: int
    ref: str
    trust_contract: TrustContract | None


@dataclass(frozen=True)
class Resolution:
    """How an input resolves at launch: `literal`, `dynamic` or `source`."""

    rule: str | None
    default: Any = None
    has_default: bool = False
    value: str | None = None  # dynamic: `now` | `today`
    source_action_ref: str | None = None
    source_select: str | None = None


@dataclass(frozen=True)
class Input:
    index: int
    name: str
    type: str | None
    resolution: Resolution
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def constraint(self) -> Mapping[str, Any] | None:
        """`constraint: {enum: [...]}` or `{pattern: "..."}` (Aileron), or None."""
        value = self.raw.get("constraint")
        return value if isinstance(value, dict) and value else None

    def violation(self, value: Any) -> str | None:
        """Why `value` breaks the input's constraint, or None when it keeps it.
        Both forms compare the value's string form, as Aileron does; a
        pattern must match the whole of it (Aileron leaves anchoring to the
        author; flightdeck anchors, so an unanchored pattern cannot let a
        longer value through)."""
        constraint = self.constraint
        if constraint is None:
            return None
        text = string_form(value)
        allowed = constraint.get("enum")
        if isinstance(allowed, list) and text not in allowed:
            return f"{text!r} is not one of {allowed!r}"
        pattern = constraint.get("pattern")
        if isinstance(pattern, str):
            try:
                matched = re.fullmatch(pattern, text)
            except re.error as exc:
                return f"the constraint pattern {pattern!r} is not a regular expression: {exc}"
            if matched is None:
                return f"{text!r} does not match the pattern {pattern!r}"
        return None


@dataclass(frozen=True)
class Output:
    index: int
    name: str
    mime_type: str | None
    encoding: str | None
    publish_target: str | None
    publish_path: str | None


@dataclass(frozen=True)
class Step:
    """One step. `references` holds args (action-call) or bindings (others)."""

    index: int
    id: str
    kind: str | None
    references: Mapping[str, str]
    outputs: tuple[str, ...] = ()
    action_ref: str | None = None
    command: tuple[str, ...] = ()
    mount_path: str | None = None
    collect_path: str | None = None
    trust_contract: TrustContract | None = None
    materializes_output: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def references_field(self) -> str:
        return "args" if self.kind == "action-call" else "bindings"

    # Bindings and dependencies are computed once per step and kept in the
    # instance's __dict__ (the step is frozen, so they cannot change): lint,
    # the graph and the scheduler each ask for them. Not `cached_property`,
    # which takes a lock on every first access (~1 µs a step).
    def bindings(self) -> dict[str, Binding]:
        """The references that parse, by argument name (a new dict each call)."""
        return dict(self._bindings())

    def _bindings(self) -> tuple[tuple[str, Binding], ...]:
        memo = self.__dict__.get("_memo_bindings")
        if memo is None:
            parsed = ((key, parse_binding(text)) for key, text in self.references.items())
            memo = tuple((key, binding) for key, binding in parsed if binding is not None)
            self.__dict__["_memo_bindings"] = memo
        return memo

    def dependencies(self) -> tuple[str, ...]:
        """Ids of the steps this step reads from, in first-reference order."""
        memo = self.__dict__.get("_memo_dependencies")
        if memo is None:
            memo = self.__dict__["_memo_dependencies"] = self._read_dependencies()
        return memo

    def _read_dependencies(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for _, binding in self._bindings():
            if binding.step is not None:
                seen.setdefault(binding.step)
        prompt = self.raw.get("prompt")
        if self.kind == "llm-seam" and isinstance(prompt, str):
            # `{{ steps.<id>.<output> }}` in a prompt reads that step too.
            for token in scan(prompt):
                if token.step is not None:
                    seen.setdefault(token.step)
        return tuple(seen)


@dataclass(frozen=True)
class Environment:
    tools: tuple[str, ...] = ()  # `<name>@<version>` as written
    image: str | None = None


@dataclass(frozen=True)
class FlightPlan:
    """A SKILL.md with its `aileron` block, read into typed parts."""

    name: str | None
    description: str | None
    data: Mapping[str, Any]  # the whole frontmatter, as loaded
    body: str
    has_aileron: bool
    schema_version: str | None = None
    requires: tuple[ActionRequirement, ...] = ()
    environment: Environment | None = None
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    steps: tuple[Step, ...] = ()
    lock: Lock | None = None

    def step(self, step_id: str) -> Step | None:
        return next((step for step in self.steps if step.id == step_id), None)

    @functools.cached_property
    def graph(self) -> StepGraph:
        """The step graph, built once per plan: lint's cycle check and the
        scheduler both walk it. Read-only (the plan is frozen)."""
        return StepGraph.of(self)

    def input(self, name: str) -> Input | None:
        return next((item for item in self.inputs if item.name == name), None)

    def output(self, name: str) -> Output | None:
        return next((item for item in self.outputs if item.name == name), None)

    def action(self, ref: str) -> ActionRequirement | None:
        return next((item for item in self.requires if item.ref == ref), None)
