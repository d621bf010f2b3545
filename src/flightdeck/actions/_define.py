"""`define_action` (alias `defineAction`): an AIP-39 action as an immutable handle.

Accepts the spec's field names in either spelling (`risk_level`/`riskLevel`,
`target_kind`/`targetKind`, `fires_events`/`firesEvents`). Every problem is
reported at once in an `ActionDefinitionError`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import semantic_version

from flightdeck.actions._approval import is_approval
from flightdeck.actions._errors import ActionDefinitionError
from flightdeck.documents import Diagnostic, pointer_join

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.-]*(:[a-z0-9][a-z0-9.-]*)?$")
MUTATES_PATTERN = re.compile(r"^[a-z*]+:\S+$|^\*$")
MAX_DESCRIPTION = 2000
IMPLEMENTATION_KINDS = ("tool", "driver", "ui", "lifecycle")
REQUIRES_KEYS = ("network", "secrets", "tools")

_ALIASES = {
    "targetKind": "target_kind",
    "riskLevel": "risk_level",
    "firesEvents": "fires_events",
}
_FIELDS = (
    "schema",
    "id",
    "description",
    "version",
    "category",
    "verb",
    "target_kind",
    "mutates",
    "requires",
    "approval",
    "risk_level",
    "fires_events",
    "implementations",
    "tags",
    "examples",
    "metadata",
)


@dataclass(frozen=True)
class Requires:
    network: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        return {k: list(getattr(self, k)) for k in REQUIRES_KEYS}


@dataclass(frozen=True)
class Implementation:
    kind: str
    ref: str


@dataclass(frozen=True)
class ActionHandle:
    """An action with every default applied. `sha256` is the content hash of the
    source file (or of the canonical JSON of an in-memory definition)."""

    id: str
    description: str
    schema: str = "action/v1"
    version: str = "1.0.0"
    category: str = ""
    verb: str = ""
    target_kind: str = ""
    mutates: tuple[str, ...] = ()
    requires: Requires = field(default_factory=Requires)
    approval: str = "auto"
    risk_level: int = 0
    fires_events: tuple[str, ...] = ()
    implementations: tuple[Implementation, ...] = ()
    tags: tuple[str, ...] = ()
    examples: tuple[Mapping[str, str], ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    source: Path | None = None
    sha256: str = ""

    # The spec's camelCase names, read-only.
    @property
    def targetKind(self) -> str:
        return self.target_kind

    @property
    def riskLevel(self) -> int:
        return self.risk_level

    @property
    def firesEvents(self) -> tuple[str, ...]:
        return self.fires_events

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "id": self.id,
            "description": self.description,
            "version": self.version,
            "category": self.category,
            "verb": self.verb,
            "target_kind": self.target_kind,
            "mutates": list(self.mutates),
            "requires": self.requires.to_dict(),
            "approval": self.approval,
            "risk_level": self.risk_level,
            "fires_events": list(self.fires_events),
            "implementations": [{"kind": i.kind, "ref": i.ref} for i in self.implementations],
            "tags": list(self.tags),
            "examples": [dict(e) for e in self.examples],
            "metadata": _thaw(self.metadata),
        }


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _normalise(definition: Mapping[str, Any]) -> dict[str, Any]:
    return {_ALIASES.get(k, k): v for k, v in definition.items()}


class _Checker:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.diags: list[Diagnostic] = []

    def add(self, code: str, message: str, *where: str | int, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, message, pointer=pointer_join("", *where), hint=hint))

    def strings(self, name: str, pattern: re.Pattern[str] | None = None) -> tuple[str, ...]:
        value = self.data.get(name, [])
        if not isinstance(value, list):
            self.add(f"action.invalid_{name}", f"`{name}` must be a list of strings", name)
            return ()
        out: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str) or (pattern is not None and not pattern.match(item)):
                self.add(f"action.invalid_{name}", f"entry {item!r} is not valid", name, i)
            else:
                out.append(item)
        return tuple(out)


def _check_identity(c: _Checker) -> None:
    d = c.data
    if "schema" in d and d["schema"] != "action/v1":
        c.add("action.invalid_schema_marker", "`schema` must be action/v1", "schema")
    ident = d.get("id")
    if not isinstance(ident, str) or not (2 <= len(ident) <= 80) or not ID_PATTERN.match(ident):
        c.add(
            "action.invalid_id",
            f"id {ident!r} must be 2-80 chars of a-z 0-9 . - with at most one ':'",
            "id",
            hint="standard shape <target-kind>:<verb>, e.g. storage:commit",
        )
    desc = d.get("description")
    if not isinstance(desc, str) or not desc.strip():
        c.add(
            "action.invalid_description", "`description` must be a non-empty string", "description"
        )
    elif len(desc) > MAX_DESCRIPTION:
        c.add(
            "action.description_too_long",
            f"description is {len(desc)} chars; the limit is {MAX_DESCRIPTION}",
            "description",
        )
    version = d.get("version", "1.0.0")
    if not isinstance(version, str) or not semantic_version.validate(version):
        c.add("action.invalid_version", f"version {version!r} is not semver", "version")
    for name in ("category", "verb", "target_kind"):
        if name in d and not isinstance(d[name], str):
            c.add(f"action.invalid_{name}", f"`{name}` must be a string", name)


def _check_profile(c: _Checker) -> None:
    d = c.data
    approval = d.get("approval", "auto")
    if not is_approval(approval):
        c.add(
            "action.unknown_approval_class",
            f"approval {approval!r} is not auto, on-mutate, always or policy:<ref>",
            "approval",
        )
    risk = d.get("risk_level", 0)
    if isinstance(risk, bool) or not isinstance(risk, int) or not 0 <= risk <= 3:
        c.add(
            "action.invalid_risk_level", f"risk_level {risk!r} must be 0, 1, 2 or 3", "risk_level"
        )
    requires = d.get("requires", {})
    if not isinstance(requires, Mapping):
        c.add("action.invalid_requires", "`requires` must be an object", "requires")
        return
    for key, value in requires.items():
        if key not in REQUIRES_KEYS:
            c.add("action.invalid_requires", f"unknown requires.{key}", "requires", key)
        elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            c.add("action.invalid_requires", f"requires.{key} must be strings", "requires", key)


def _implementations(c: _Checker) -> tuple[Implementation, ...]:
    value = c.data.get("implementations", [])
    out: list[Implementation] = []
    for i, item in enumerate(value if isinstance(value, list) else [None]):
        ok = isinstance(item, Mapping) and item.get("kind") in IMPLEMENTATION_KINDS
        if not ok or not isinstance(item.get("ref"), str):
            c.add(
                "action.invalid_implementations",
                "need {kind: tool|driver|ui|lifecycle, ref}",
                "implementations",
                i,
            )
        else:
            out.append(Implementation(item["kind"], item["ref"]))
    return tuple(out)


def _examples(c: _Checker) -> tuple[Mapping[str, str], ...]:
    value = c.data.get("examples", [])
    out: list[Mapping[str, str]] = []
    for i, item in enumerate(value if isinstance(value, list) else [None]):
        if not isinstance(item, Mapping) or not all(
            isinstance(item.get(k), str) for k in ("name", "scenario")
        ):
            c.add(
                "action.invalid_examples", "each example needs a name and a scenario", "examples", i
            )
        else:
            out.append(MappingProxyType(dict(item)))
    return tuple(out)


def content_hash(data: Mapping[str, Any]) -> str:
    canonical = json.dumps(_thaw(data), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def define_action(
    definition: Mapping[str, Any] | None = None,
    /,
    *,
    source: Path | None = None,
    sha256: str | None = None,
    **fields: Any,
) -> ActionHandle:
    """Build an `ActionHandle`; raises `ActionDefinitionError` with every problem."""
    data = _normalise({**(definition or {}), **fields})
    c = _Checker(data)
    for key in data:
        if key not in _FIELDS:
            c.add("action.unknown_field", f"unknown field `{key}`", key)
    _check_identity(c)
    _check_profile(c)
    mutates = c.strings("mutates", MUTATES_PATTERN)
    fires = c.strings("fires_events")
    tags = c.strings("tags")
    implementations = _implementations(c)
    examples = _examples(c)
    metadata = data.get("metadata", {})
    if not isinstance(metadata, Mapping):
        c.add("action.invalid_metadata", "`metadata` must be an object", "metadata")
        metadata = {}
    if c.diags:
        raise ActionDefinitionError(c.diags)
    ident: str = data["id"]
    head, sep, tail = ident.partition(":")
    req = data.get("requires", {})
    return ActionHandle(
        schema="action/v1",
        id=ident,
        description=data["description"],
        version=data.get("version", "1.0.0"),
        category=data.get("category", ""),
        # Derived from the id when absent: `storage:commit` -> verb commit, kind storage.
        verb=data.get("verb") or (tail if sep else ident),
        target_kind=data.get("target_kind") or (head if sep else ""),
        mutates=mutates,
        requires=Requires(*(tuple(req.get(k, [])) for k in REQUIRES_KEYS)),
        approval=data.get("approval", "auto"),
        risk_level=data.get("risk_level", 0),
        fires_events=fires,
        implementations=implementations,
        tags=tags,
        examples=examples,
        metadata=_freeze(metadata),
        source=source,
        sha256=sha256 or content_hash(data),
    )


defineAction = define_action
