"""The one process-wide audit hook and the context variable it reads."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

from flightdeck.guard._events import Event, classify
from flightdeck.guard._policy import Policy, is_ip, normal_host

Layers = tuple[Policy, ...]

# outermost layer first; the empty tuple (falsy) is the common, cheap case
_LAYERS: ContextVar[Layers] = ContextVar("flightdeck_guard_layers", default=())
_installed = False
_install_lock = threading.Lock()


def _resolve(name: str) -> set[str]:
    """Addresses of `name`, looked up with the guard off (no re-entry, no refusal)."""
    token = _LAYERS.set(())
    try:
        return {normal_host(str(info[4][0])) for info in socket.getaddrinfo(name, None)}
    except (OSError, UnicodeError):
        return set()
    finally:
        _LAYERS.reset(token)


def _judge(layers: Layers, event: Event) -> None:
    for layer in layers:
        layer.saw(event)
    refusing = [layer for layer in layers if not layer.allows(event, _resolve)]
    if refusing:
        # every refusing layer remembers; the innermost (closest to the code) speaks
        errors = [layer.refuse(event) for layer in refusing]
        raise errors[-1]
    for layer in layers:
        layer.allowed(event)
    name = event.host
    if event.kind != "dns" or not name or is_ip(name):
        return
    if any(layer.hosts is not None for layer in layers):  # only allow-lists need addresses
        addresses = _resolve(name)
        for layer in layers:
            layer.learn(name, addresses)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    layers = _LAYERS.get()
    if not layers:  # no guard in this context: one ContextVar read
        return
    found = classify(event, args)
    if found is not None:
        _judge(layers, found)


def install() -> None:
    """Install the process-wide hook once (idempotent; hooks cannot be removed)."""
    global _installed
    if _installed:
        return
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


def enter(policy: Policy) -> Token[Layers]:
    """Push `policy` as the innermost layer of this context; undo with `leave(token)`."""
    if not _installed:  # the flag read inline: entered on every driver call
        install()
    # concatenation: ~35 ns a call less than `(*layers, policy)` (a list built and converted)
    return _LAYERS.set(_LAYERS.get() + (policy,))  # noqa: RUF005


def leave(token: Token[Layers]) -> None:
    _LAYERS.reset(token)


@contextmanager
def active(policy: Policy) -> Iterator[Policy]:
    """Run the body under `policy` too (this context, its tasks and `to_thread` calls)."""
    token = enter(policy)
    try:
        yield policy
    finally:
        leave(token)


def layers() -> Layers:
    """The layers active in this context, outermost first (empty outside any guard)."""
    return _LAYERS.get()
