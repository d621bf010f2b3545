"""What a command run as root tries inside a sandbox (issue 28): remount
what it was given read-only as writable, unmount what covers a secret, write
where it may not. Shared by the tool-step tests (host tools and images) and
the agent's Bash tests; `verdicts` reads the report back."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

# Each attempt prints exactly one line "<what> <path>: refused|DONE".
_ATTEMPT = (
    'if {command} >/dev/null 2>&1 </dev/null; then echo "{what} {path}: DONE";'
    ' else echo "{what} {path}: refused"; fi'
)


def attack_script(
    *,
    remount: Sequence[str],
    unmount: Sequence[str] = (),
    write: Sequence[str] = (),
    mounts: tuple[str, ...] = ("mount", "busybox mount"),
) -> str:
    """A POSIX shell script (dash, bash and busybox sh alike) that prints
    the process's privileges, then tries each attack with each `mount`:
    remounts, then writes (through a remount that worked), then unmounts."""
    lines = [
        "grep -E '^(Uid|CapPrm|CapEff|CapBnd|NoNewPrivs):' /proc/self/status",
        # The session id (field 6 of stat) is 0 when the session began outside
        # the sandbox's PID namespace: its terminal would be reachable (TIOCSTI).
        'read -r stat < /proc/self/stat; set -- $stat; echo "Sid: $6"',
    ]
    for path in remount:
        for mount in mounts:
            for options in ("remount,rw,bind", "remount,rw"):
                command = f"{mount} -o {options} {path}"
                lines.append(
                    _ATTEMPT.format(command=command, what=f"remount({options})", path=path)
                )
    for path in write:
        lines.append(_ATTEMPT.format(command=f"touch {path}", what="write", path=path))
    for path in unmount:
        for mount in mounts:
            umount = mount.replace("mount", "umount")
            for flags in ("", "-l "):
                lines.append(
                    _ATTEMPT.format(command=f"{umount} {flags}{path}", what="umount", path=path)
                )
    return "\n".join(lines) + "\n"


def attempt_line(command: str, what: str, path: str) -> str:
    """One more attempt, in the script's form: `command` succeeding is a breach."""
    return _ATTEMPT.format(command=command, what=what, path=path) + "\n"


def attempts(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.endswith((": DONE", ": refused"))]


def breaches(report: str) -> list[str]:
    return [line for line in attempts(report) if line.endswith(": DONE")]


def status(report: str) -> dict[str, str]:
    """The /proc/self/status lines the script printed: name -> value."""
    found = {}
    for line in report.splitlines():
        name, colon, value = line.partition(":")
        if colon and name in ("Uid", "CapPrm", "CapEff", "CapBnd", "NoNewPrivs", "Sid"):
            found[name] = value.split()[0]
    return found


def assert_unprivileged(report: str, *, expected_attempts: int, as_nobody: bool = True) -> None:
    """No capability, no way to gain one, every attack refused (and all of
    them tried: a script that stopped early proves nothing)."""
    assert breaches(report) == [], report
    seen = status(report)
    assert seen.get("CapEff") == seen.get("CapPrm") == "0000000000000000", report
    assert seen.get("CapBnd") == "0000000000000000", report
    assert seen.get("NoNewPrivs") == "1", report
    assert seen.get("Sid") not in (None, "0"), report  # a session of its own
    if os.geteuid() == 0 and as_nobody:
        assert seen.get("Uid") == "65534", report  # root is "nobody" inside
    assert len(attempts(report)) == expected_attempts, report


@contextlib.contextmanager
def without_user_namespaces(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The real bubblewrap behind a `bwrap` first on PATH that fails when
    asked for a user namespace, as on a host that allows none: the probe
    falls back to dropping capabilities alone."""
    from flightdeck.guard import bwrap_path
    from flightdeck.guard._bwrap import forget_probe

    real = bwrap_path()
    assert real is not None
    folder.mkdir()
    wrapper = folder / "bwrap"
    wrapper.write_text(
        f'#!/bin/sh\ncase " $* " in *" --unshare-user "*) exit 1;; esac\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    forget_probe()
    try:
        yield wrapper
    finally:
        forget_probe()
