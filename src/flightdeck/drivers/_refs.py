"""Resolving `function_ref` against an imported module (AIP-33 § Function refs).

    default               module.default, module.__default__, module.main, or the module if callable
    createImage           module.createImage, else module.create_image
    images.create         module.images.create
    Client.images.create  Client(**client_options).images.create   (one client per identity)

A class met before the last part is the constructor pattern: it is
instantiated through `make_client` (which caches one instance per driver and
identity) and the rest of the ref is looked up on the instance.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


class RefError(Exception):
    """`part` is the dotted prefix that failed; `reason` says how."""

    def __init__(self, part: str, reason: str) -> None:
        super().__init__(f"`{part}`: {reason}")
        self.part = part
        self.reason = reason


def snake(name: str) -> str:
    return _CAMEL.sub(r"_\1", name).lower()


def _attr(obj: Any, name: str, where: str) -> Any:
    for candidate in (name, snake(name)):
        try:
            return getattr(obj, candidate)
        except AttributeError:
            continue
    raise RefError(where, f"has no attribute {name!r}")


def _default(module: ModuleType) -> Any:
    for name in ("default", "__default__", "main"):
        if hasattr(module, name):
            return getattr(module, name)
    if callable(module):
        return module
    raise RefError("default", "the module exports no default, __default__ or main")


@dataclass(frozen=True)
class ResolvedRef:
    """What a ref points at. `constructor` is set for the constructor pattern, with
    `tail` the attribute path looked up on each client instance."""

    ref: str
    function: Callable[..., Any]
    constructor: type | None = None
    tail: tuple[str, ...] = ()

    def on_client(self, client: Any) -> Callable[..., Any]:
        target = client
        for i, name in enumerate(self.tail):
            target = _attr(target, name, ".".join((self.ref.split(".")[0], *self.tail[: i + 1])))
        if not callable(target):
            raise RefError(self.ref, "is not callable")
        return target  # type: ignore[no-any-return]


def resolve_ref(module: ModuleType, ref: str, make_client: Callable[[type], Any]) -> ResolvedRef:
    """Resolve a ref now (registration time). Raises RefError naming the failing part."""
    parts = ref.split(".")
    if parts == ["default"]:
        target = _default(module)
        if not callable(target):
            raise RefError("default", "is not callable")
        return ResolvedRef(ref, target)
    obj: Any = module
    for i, name in enumerate(parts):
        where = ".".join(parts[: i + 1])
        obj = _attr(obj, name, where)
        if inspect.isclass(obj) and i < len(parts) - 1:
            tail = tuple(parts[i + 1 :])
            try:
                client = make_client(obj)
            except RefError as exc:
                raise RefError(where, exc.reason) from None
            except Exception as exc:  # the package's own constructor error
                raise RefError(where, f"constructor raised {type(exc).__name__}: {exc}") from exc
            resolved = ResolvedRef(ref, _noop, obj, tail)
            return ResolvedRef(ref, resolved.on_client(client), obj, tail)
    if not callable(obj):
        raise RefError(ref, "is not callable")
    return ResolvedRef(ref, obj)


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


def call_style(function: Callable[..., Any]) -> str:
    """How to pass the input when there is no args_template: `positional` (fn(input)) or
    `keywords` (fn(**input), for functions taking keyword-only arguments)."""
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):
        return "positional"
    kinds = {p.kind for p in sig.parameters.values()}
    positional = {
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    }
    if kinds & positional:
        return "positional"
    if kinds & {inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD}:
        return "keywords"
    return "positional"
