"""The curated tool catalog and the loose tool-version grammar.

`environment.tools` entries are `<name>@<version>`. The version grammar is
deliberately loose (seed 003): `2`, `2.x`, `2.19`, `2.19.x` and `2.19.1` are
all accepted; freeze resolves one to the highest catalog version it matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from flightdeck._json import read_json

# The built-in transforms launch provides (flightdeck.launch keeps the code;
# this layer may not import it). A host can register more, so lint only warns
# about a name outside this list.
_TRANSFORMS = ("identity", "template", "csv", "json", "select", "html-render")

_VERSION = re.compile(r"^\d+(\.(\d+|x)){0,2}$")
_TOOL_REF = re.compile(r"^([a-z0-9][a-z0-9._-]*)@(.+)$")


@dataclass(frozen=True)
class CatalogTool:
    name: str
    programs: tuple[str, ...]
    versions: tuple[str, ...]  # ascending


@dataclass(frozen=True)
class ToolRef:
    """One `environment.tools` entry, split."""

    text: str
    name: str
    version: str


def parse_tool_ref(text: object) -> ToolRef | None:
    if not isinstance(text, str):
        return None
    match = _TOOL_REF.match(text)
    if not match:
        return None
    return ToolRef(text, match.group(1), match.group(2))


def valid_version_spec(spec: str) -> bool:
    return bool(_VERSION.match(spec)) and not re.search(r"x\.\d", spec)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@lru_cache(maxsize=1)
def catalog() -> dict[str, CatalogTool]:
    """The shipped catalog (package data `catalog.json`), read once."""
    raw = resources.files("flightdeck.flightplan.model").joinpath("catalog.json").read_text("utf-8")
    tools = read_json(raw)["tools"]
    return {
        name: CatalogTool(
            name, tuple(entry["programs"]), tuple(sorted(entry["versions"], key=_key))
        )
        for name, entry in sorted(tools.items())
    }


def resolve_version(tool: CatalogTool, spec: str) -> str | None:
    """The highest catalog version matching `spec`, or None."""
    if not valid_version_spec(spec):
        return None
    wanted = [part for part in spec.split(".") if part != "x"]
    matches = [v for v in tool.versions if v.split(".")[: len(wanted)] == wanted]
    return matches[-1] if matches else None


def builtin_transforms() -> tuple[str, ...]:
    """The names of the transforms launch has built in."""
    return _TRANSFORMS
