"""Tools (AIP-14): the TOOL contract with its IO and its merged safety view.

    tool = load_tool(".tools/git-push", libraries=library_search_path())
    tool.view.mutates, tool.view.approval, tool.view.origins["approval"]
    report = inspect_manifest(path)    # what `flightdeck inspect` prints

A tool that implements an action inherits the action's floors and may only
narrow them (see `flightdeck.actions.check_narrowing`).
"""

from __future__ import annotations

from flightdeck.tools._define import (
    REMOVED_FIELDS,
    ToolDefinitionError,
    ToolHandle,
    define_tool,
    defineTool,
    load_tool,
)
from flightdeck.tools._inspect import InspectReport, inspect_manifest

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
