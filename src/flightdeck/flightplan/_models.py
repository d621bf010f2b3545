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

from flightdeck.flightplan._bindings import Binding, parse_binding
from flightdeck.flightplan._graph import StepGraph
from flightdeck.flightplan._tokens import scan, string_form

STEP_KINDS = ("action-call", "transform", "tool", "llm-seam")


def _map(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strs(value: object) -> tuple[str, ...]:
    return tuple(item for item in _list(value) if isinstance(item, str))


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
class ResolvedImage:
    ref: str  # the image as `environment.image` names it
    # Aileron's form, a bare `sha256:<hex>` (what freeze writes); locks
    # frozen before hold `<name>@sha256:<hex>`, still read.
    digest: str
    local_tag: str | None = None  # Aileron's composed-tools tag, booted as written

    @property
    def pinned(self) -> str:
        """The reference launch pulls: `<registry>/<repository>@sha256:<hex>`,
        the repository named by `ref` (an older lock's digest already is one)."""
        if "@" in self.digest:
            return self.digest
        # Lazily: _images brings httpx, which most readers of a plan never need.
        from flightdeck.flightplan._errors import FlightPlanError
        from flightdeck.flightplan._images import ImageRef, parse_image_ref

        try:
            image = parse_image_ref(self.ref)
        except FlightPlanError:  # lint refuses such a ref; keep it readable here
            return f"{self.ref.partition('@')[0]}@{self.digest}"
        return ImageRef(image.registry, image.repository, None, self.digest).pinned

    def to_data(self) -> dict[str, str]:
        data = {"ref": self.ref, "digest": self.digest}
        if self.local_tag is not None:
            data["localTag"] = self.local_tag
        return data


@dataclass(frozen=True)
class ResolvedCapability:
    name: str
    requested: str
    version: str

    @classmethod
    def read(cls, item: object) -> ResolvedCapability | None:
        """`<name>@<version>` (Aileron's schema, what freeze writes) or the
        older `{name, requested, version}` object flightdeck wrote before."""
        if isinstance(item, str):
            name, at, version = item.rpartition("@")
            return cls(name, version, version) if at and name and version else None
        if isinstance(item, dict) and all(
            isinstance(item.get(k), str) for k in ("name", "requested", "version")
        ):
            return cls(item["name"], item["requested"], item["version"])
        return None

    def to_data(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class CodePin:
    """The code behind a plan's action refs to one driver, pinned at freeze:
    where its DRIVER.md was (`root` "workspace" or "library", `location`
    relative to it), the tools the plan calls, and the code digest
    (docs/canonical-bytes.md). `files` lists the digested files of a
    workspace-local tree by name; an installed distribution is pinned by
    `distribution`, `version` and the digest alone."""

    driver: str
    tools: tuple[str, ...]
    root: str
    location: str
    digest: str
    files: Mapping[str, str] = field(default_factory=dict)
    distribution: str | None = None
    version: str | None = None

    @classmethod
    def read(cls, item: object) -> CodePin | None:
        value = _map(item)
        fields = [value.get(k) for k in ("driver", "root", "location", "digest")]
        if not all(isinstance(f, str) for f in fields):
            return None
        dist = _map(value.get("distribution"))
        return cls(
            driver=str(fields[0]),
            tools=_strs(value.get("tools")),
            root=str(fields[1]),
            location=str(fields[2]),
            digest=str(fields[3]),
            files={k: v for k, v in _map(value.get("files")).items() if isinstance(v, str)},
            distribution=_str(dist.get("name")),
            version=_str(dist.get("version")),
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "driver": self.driver,
            "tools": list(self.tools),
            "root": self.root,
            "location": self.location,
            "digest": self.digest,
            "files": dict(self.files),
        }
        if self.distribution is not None:
            data["distribution"] = {"name": self.distribution, "version": self.version}
        return data


@dataclass(frozen=True)
class Lock:
    """The `aileron.lock` section written by freeze."""

    resolved_images: tuple[ResolvedImage, ...] = ()
    resolved_capability_set: tuple[ResolvedCapability, ...] = ()
    step_trust: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # step id -> hosts
    publisher: str | None = None
    content_hash: str | None = None
    version: str | None = None
    code_pins: tuple[CodePin, ...] = ()

    @classmethod
    def read(cls, value: object) -> Lock | None:
        if not isinstance(value, dict):
            return None
        images = tuple(
            ResolvedImage(item["ref"], item["digest"], _str(item.get("localTag")))
            for item in _list(value.get("resolvedImages"))
            if isinstance(item, dict)
            and isinstance(item.get("ref"), str)
            and isinstance(item.get("digest"), str)
        )
        read = (ResolvedCapability.read(item) for item in _list(value.get("resolvedCapabilitySet")))
        capabilities = tuple(cap for cap in read if cap is not None)
        trust = {
            step_id: _strs(_map(entry).get("hosts"))
            for step_id, entry in _map(value.get("stepTrust")).items()
        }
        return cls(
            resolved_images=images,
            resolved_capability_set=capabilities,
            step_trust=trust,
            publisher=_str(value.get("publisher")),
            content_hash=_str(value.get("contentHash")),
            version=_str(value.get("version")),
            code_pins=tuple(
                pin for pin in map(CodePin.read, _list(value.get("codePins"))) if pin is not None
            ),
        )

    def to_data(self) -> dict[str, Any]:
        """The lock as frontmatter data; empty sections are left out."""
        data: dict[str, Any] = {}
        if self.resolved_images:
            data["resolvedImages"] = [image.to_data() for image in self.resolved_images]
        if self.resolved_capability_set:
            # Strings, as Aileron's schema has them: `aws-cli@2.22.4`, the
            # version freeze pinned (the request stays in environment.tools).
            data["resolvedCapabilitySet"] = [cap.to_data() for cap in self.resolved_capability_set]
        if self.step_trust:
            data["stepTrust"] = {
                step_id: {"hosts": list(hosts)} for step_id, hosts in self.step_trust.items()
            }
        if self.code_pins:
            data["codePins"] = [pin.to_data() for pin in self.code_pins]
        for key, value in (
            ("publisher", self.publisher),
            ("version", self.version),
            ("contentHash", self.content_hash),
        ):
            if value is not None:
                data[key] = value
        return data


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
