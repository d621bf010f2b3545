"""Parsing action references (no I/O): inline | {ref} | {file} | string shorthands.

{inline: {...}}                 an action defined in place
{ref: "@owner/ws/slug@^1"}      a registry address (optionally version-pinned)
{ref: "storage:commit"}         a bare action id
{file: "./actions/x/ACTION.md"} a path (folder or file)
"@owner/ws/slug[@range]"        shorthand for {ref}
"./relative" / "../relative"    shorthand for {file}
"storage:commit"                shorthand for {ref} with a bare id
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import semantic_version

from flightdeck.actions._define import ID_PATTERN
from flightdeck.actions._errors import ActionRefError

RefForm = Literal["inline", "registry", "file", "id"]
_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class ActionRef:
    form: RefForm
    raw: str  # the text of the ref as written ("<inline>" for inline)
    owner: str = ""
    workspace: str = ""  # may hold several segments: "actions/standard"
    slug: str = ""
    version_range: str | None = None
    path: str = ""
    action_id: str = ""
    inline: Mapping[str, Any] | None = None

    @property
    def address(self) -> str:
        """`@owner/ws/slug` without the pin (the lock key of a registry ref)."""
        return f"@{self.owner}/{self.workspace}/{self.slug}"


def _registry(raw: str) -> ActionRef:
    body, _, pin = raw[1:].partition("@")
    parts = body.split("/")
    if len(parts) < 3 or not all(_SEGMENT.match(p) for p in parts):
        raise ActionRefError(raw, "a registry address is @<owner>/<workspace>/<action-slug>")
    if pin:
        try:
            semantic_version.NpmSpec(pin)
        except ValueError:
            raise ActionRefError(raw, f"version pin {pin!r} is not an npm-style range") from None
    return ActionRef(
        "registry",
        raw,
        owner=parts[0],
        workspace="/".join(parts[1:-1]),
        slug=parts[-1],
        version_range=pin or None,
    )


def _string(raw: str, allow_path: bool = True) -> ActionRef:
    text = raw.strip()
    if text.startswith("@"):
        return _registry(text)
    if text.startswith(("./", "../")) and allow_path:
        return ActionRef("file", raw, path=text)
    if ID_PATTERN.match(text) and 2 <= len(text) <= 80:
        return ActionRef("id", raw, action_id=text)
    raise ActionRefError(
        raw,
        "not an action ref: expected @owner/ws/slug, ./path or an action id like storage:commit",
    )


def parse_action_ref(value: Any) -> ActionRef:
    """Parse any accepted form; `ActionRefError` (action_ref_unresolvable) when malformed."""
    if isinstance(value, ActionRef):
        return value
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping) and len(value) == 1:
        ((key, inner),) = value.items()
        if key == "inline" and isinstance(inner, Mapping):
            return ActionRef("inline", "<inline>", inline=inner)
        if key == "ref" and isinstance(inner, str):
            return _string(inner, allow_path=False)
        if key == "file" and isinstance(inner, str) and inner.strip():
            return ActionRef("file", inner, path=inner.strip())
    raise ActionRefError(
        repr(value), "expected a string, {inline: {...}}, {ref: <address>} or {file: <path>}"
    )
