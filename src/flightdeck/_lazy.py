"""A package's exported names, imported on first use (PEP 562).

`flightdeck` and its packages keep start-up cheap by importing a name's
module only when the name is first read. Each maps its names to their
modules and forwards its module-level `__getattr__` and `__dir__` here.
Nothing is imported at this module's import but `sys`, which
`flightdeck --version` already has.
"""

from __future__ import annotations

import sys

# Not `typing.TYPE_CHECKING`: `import flightdeck` must not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any


class LazyNames:
    """`homes` maps each lazily exported name to the module that defines it,
    or to `(module, attribute)` when the attribute has another name there."""

    def __init__(self, package: str, homes: Mapping[str, str | tuple[str, str]]) -> None:
        self.package = package
        self.homes = dict(homes)

    def load(self, name: str) -> Any:
        home = self.homes.get(name)
        if home is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        from importlib import import_module

        module, attribute = (home, name) if isinstance(home, str) else home
        value = getattr(import_module(module), attribute)
        # Kept on the package: the next read is a plain attribute, not a call here.
        setattr(sys.modules[self.package], name, value)
        return value

    def names(self, *, public_only: bool = False) -> list[str]:
        """`dir()` of the package: its `__all__`, plus what it holds unless `public_only`."""
        module = sys.modules[self.package]
        exported: Iterable[str] = getattr(module, "__all__", ())
        return sorted(set(exported) if public_only else set(vars(module)) | set(exported))
