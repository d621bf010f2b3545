"""flightdeck: a toolkit and runtime for agent manifests.

The names below are the everyday entry points; each capability package
(`flightdeck.documents`, `.actions`, `.tools`, `.io`, `.drivers`,
`.flightplan`, `.launch`, `.agent`, `.llm`, `.audit`) has the full surface.
They are imported on first use, so `import flightdeck` stays cheap. The
specs' canonical camelCase names (`defineAction`, `defineIO`,
`defineDriver`, `defineTool`) are aliases of the snake_case ones.
"""

from __future__ import annotations

from flightdeck._lazy import LazyNames as _LazyNames
from flightdeck._version import __version__

# Not `typing.TYPE_CHECKING`: importing typing costs more than the rest of
# `flightdeck --version`; mypy treats any name TYPE_CHECKING the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from flightdeck.actions import ActionHandle, define_action, defineAction, load_action
    from flightdeck.documents import (
        Diagnostic,
        Document,
        DocumentKind,
        LoadResult,
        load_document,
        parse_document,
    )
    from flightdeck.drivers import (
        SdkDriver,
        call_tool,
        define_driver,
        defineDriver,
        load_driver,
    )
    from flightdeck.io import IOHandle, define_io, defineIO
    from flightdeck.tools import ToolHandle, define_tool, defineTool, load_tool
    from flightdeck.validation import validate_paths

_LAZY: dict[str, str] = {
    "ActionHandle": "flightdeck.actions",
    "Diagnostic": "flightdeck.documents",
    "Document": "flightdeck.documents",
    "DocumentKind": "flightdeck.documents",
    "IOHandle": "flightdeck.io",
    "LoadResult": "flightdeck.documents",
    "ToolHandle": "flightdeck.tools",
    "SdkDriver": "flightdeck.drivers",
    "call_tool": "flightdeck.drivers",
    "defineAction": "flightdeck.actions",
    "defineDriver": "flightdeck.drivers",
    "defineIO": "flightdeck.io",
    "defineTool": "flightdeck.tools",
    "define_action": "flightdeck.actions",
    "define_driver": "flightdeck.drivers",
    "define_io": "flightdeck.io",
    "define_tool": "flightdeck.tools",
    "load_action": "flightdeck.actions",
    "load_document": "flightdeck.documents",
    "load_driver": "flightdeck.drivers",
    "load_tool": "flightdeck.tools",
    "parse_document": "flightdeck.documents",
    "validate_paths": "flightdeck.validation",
}

__all__ = [
    "ActionHandle",
    "Diagnostic",
    "Document",
    "DocumentKind",
    "IOHandle",
    "LoadResult",
    "SdkDriver",
    "ToolHandle",
    "__version__",
    "call_tool",
    "defineAction",
    "defineDriver",
    "defineIO",
    "defineTool",
    "define_action",
    "define_driver",
    "define_io",
    "define_tool",
    "load_action",
    "load_document",
    "load_driver",
    "load_tool",
    "parse_document",
    "validate_paths",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names(public_only=True)
