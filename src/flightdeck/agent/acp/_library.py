"""Importing the `acp` library without the work the agent never uses.

`import acp` builds ~280 pydantic models in `acp.schema`. Two parts of that
are for JSON Schema generation or for validating every model up front, and
the agent does neither:

- the models use `use_attribute_docstrings=True`, so pydantic reads each
  class's source (inspect, tokenize, compile) to turn field docstrings into
  `description`s, which appear only in a generated JSON Schema;
- every model's validator and serializer is built at class creation, though
  one connection uses a few dozen of them.

So for the duration of that one import, field docstrings of classes defined
in `acp` modules are not read, and models are created with `defer_build`
(pydantic's own option: the validator is built on first use, ~1 ms each).
Validation and serialisation are the same (tests/agent_acp/test_acp_library.py
compares them message by message). Both settings live in pydantic internals,
so each is applied only if it is there in the expected shape; if the fast
import fails in any way, the partial import is discarded and `acp` is
imported normally. docs/decisions.md has the measurements.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def _acp_class(args: tuple[Any, ...]) -> bool:
    cls = args[0] if args else None
    return isinstance(cls, type) and cls.__module__.partition(".")[0] == "acp"


def _without_docstrings(original: Callable[..., Any]) -> Callable[..., Any]:
    def extract(*args: Any, **kwargs: Any) -> Any:
        # A class from anywhere else imported meanwhile keeps its descriptions.
        return {} if _acp_class(args) else original(*args, **kwargs)

    return extract


def _patches() -> list[tuple[Any, str, Any]]:
    """(holder, key, value while importing); a holder is a module or a dict."""
    try:
        from pydantic._internal import _config, _fields, _generate_schema
    except ImportError:
        return []
    patches: list[tuple[Any, str, Any]] = []
    for module in (_fields, _generate_schema):  # both call it by this name
        original = getattr(module, "extract_docstrings_from_cls", None)
        if callable(original):
            patches.append((module, "extract_docstrings_from_cls", _without_docstrings(original)))
    defaults = getattr(_config, "config_defaults", None)
    if isinstance(defaults, dict) and defaults.get("defer_build") is False:
        patches.append((defaults, "defer_build", True))
    return patches


def _swap(patches: list[tuple[Any, str, Any]]) -> list[tuple[Any, str, Any]]:
    """Apply `patches`; returns the patches that restore what was there."""
    undo: list[tuple[Any, str, Any]] = []
    for holder, key, value in patches:
        if isinstance(holder, dict):
            undo.append((holder, key, holder[key]))
            holder[key] = value
        else:
            undo.append((holder, key, getattr(holder, key)))
            setattr(holder, key, value)
    return undo


def import_acp() -> tuple[str, ...]:
    """Import `acp` (and `acp.schema`) as cheaply as this pydantic allows.

    Returns the settings that applied (none: a normal import, or `acp` was
    already imported). Runs at start-up, before the agent starts threads: the
    settings are process-wide while they are in place.
    """
    if "acp" in sys.modules:
        return ()
    patches = _patches()
    undo = _swap(patches)
    try:
        importlib.import_module("acp")
    except Exception:
        # Whatever went wrong under the patches, try once more without them.
        for name in [m for m in sys.modules if m == "acp" or m.startswith("acp.")]:
            del sys.modules[name]
        _swap(undo)
        undo = []
        importlib.import_module("acp")
        return ()
    finally:
        _swap(undo)
    return tuple(sorted({key for _, key, _ in patches}))


__all__ = ["import_acp"]
