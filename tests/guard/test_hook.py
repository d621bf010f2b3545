"""The one hook: installed once, lazily, and a single context read when inactive."""

from __future__ import annotations

import socket
import sys

import pytest

import flightdeck.guard as guard_pkg
from flightdeck.guard import Policy, _hook, active, enter, install, layers, leave


def test_public_surface_is_pinned() -> None:
    assert guard_pkg.__all__ == sorted(guard_pkg.__all__)
    public = {n for n in dir(guard_pkg) if not n.startswith("_")}
    assert public - set(guard_pkg.__all__) <= {"annotations"}
    assert set(guard_pkg.__all__) == {
        "EgressProxy",
        "SandboxLayout",
        "bwrap_path",
        "bwrap_privileges",
        "Event",
        "FileAccess",
        "FileScope",
        "Layers",
        "Policy",
        "Refused",
        "active",
        "enter",
        "host_matches",
        "install",
        "interpreter_roots",
        "layers",
        "leave",
    }


def test_one_hook_installed_lazily_however_many_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    added: list[object] = []
    monkeypatch.setattr(_hook, "_installed", False)
    monkeypatch.setattr(sys, "addaudithook", added.append)
    assert added == []  # importing the package installs nothing
    for _ in range(3):
        with active(Policy.watch()):
            pass
    leave(enter(Policy.deny_all(owner="t", limit="x")))
    install()
    assert added == [_hook._hook]


def test_inactive_path_reads_the_context_and_classifies_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Outside any layer the hook returns before looking at the event."""
    install()

    def boom(event: str, args: tuple[object, ...]) -> None:
        raise AssertionError(f"classified {event} with no layer active")

    monkeypatch.setattr(_hook, "classify", boom)
    assert layers() == ()
    sys.audit("socket.getaddrinfo", "anything.example", 443, 0, 0, 0)
    with pytest.raises(OSError) as caught:  # the refusal comes from the OS, not the guard
        socket.create_connection(("127.0.0.1", 1), timeout=1)
    assert not isinstance(caught.value, PermissionError)
    with pytest.raises(AssertionError, match="classified"), active(Policy.watch()):
        sys.audit("socket.getaddrinfo", "x.example", 443, 0, 0, 0)
