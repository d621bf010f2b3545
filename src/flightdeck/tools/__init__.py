"""Tools (AIP-14): the TOOL contract with its IO and its merged safety view.

    tool = load_tool(".tools/git-push", libraries=library_search_path())
    tool.view.mutates, tool.view.approval, tool.view.origins["approval"]
    report = inspect_manifest(path)    # what `flightdeck inspect` prints

A tool that implements an action inherits the action's floors and may only
narrow them (see `flightdeck.actions.check_narrowing`).
"""

from __future__ import annotations

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
    from flightdeck.tools._define import (
        REMOVED_FIELDS,
        ToolDefinitionError,
        ToolHandle,
        define_tool,
        defineTool,
        load_tool,
    )
    from flightdeck.tools._inspect import InspectReport, inspect_manifest

_LAZY: dict[str, tuple[str, str]] = {
    "REMOVED_FIELDS": ("flightdeck.tools._define", "REMOVED_FIELDS"),
    "ToolDefinitionError": ("flightdeck.tools._define", "ToolDefinitionError"),
    "ToolHandle": ("flightdeck.tools._define", "ToolHandle"),
    "define_tool": ("flightdeck.tools._define", "define_tool"),
    "defineTool": ("flightdeck.tools._define", "defineTool"),
    "load_tool": ("flightdeck.tools._define", "load_tool"),
    "InspectReport": ("flightdeck.tools._inspect", "InspectReport"),
    "inspect_manifest": ("flightdeck.tools._inspect", "inspect_manifest"),
}


__all__ = [
    "REMOVED_FIELDS",
    "InspectReport",
    "ToolDefinitionError",
    "ToolHandle",
    "defineTool",
    "define_tool",
    "inspect_manifest",
    "load_tool",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
