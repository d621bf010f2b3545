"""Finding a working bubblewrap, shared by the launch layer's tool steps and
the agent's Bash and Grep (neither may import the other), and the arguments
that leave every sandbox without privilege.

Bubblewrap keeps every capability when root starts it: a command could then
`mount -o remount,rw` what it was given read-only, or unmount the file that
masks a secret. So every sandbox drops them all (`--cap-drop ALL`, which also
empties the bounding set, so no later `execve` gets them back), runs in a
user namespace of its own where the kernel allows one (`--unshare-user`; for
root, as the unprivileged `SANDBOX_UID`), and may not create another
(`--disable-userns`, bubblewrap 0.8). Bubblewrap always sets no-new-privs.
The probe finds the strongest of these sets that works here.
"""

from __future__ import annotations

import functools
import os
import subprocess
from typing import ClassVar

# Inside the sandbox root becomes "nobody": a name /etc/passwd has on Debian
# and in most images, and no privilege anywhere.
SANDBOX_UID = 65534
PROBE_TIMEOUT = 10.0


class SandboxLayout:
    """What every flightdeck sandbox shows of the host."""

    # The read-only system directories, and the merged-/usr links recreated
    # inside when the host has them.
    SYSTEM_DIRS: ClassVar[tuple[str, ...]] = ("/usr", "/etc", "/opt")
    USR_LINKS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("usr/bin", "/bin"),
        ("usr/sbin", "/sbin"),
        ("usr/lib", "/lib"),
        ("usr/lib64", "/lib64"),
    )
    SAFE_PATH: ClassVar[str] = "/usr/local/bin:/usr/bin:/bin"


def _privilege_sets() -> tuple[tuple[str, ...], ...]:
    """The ways to start a sandbox without privilege, strongest first. Each
    drops every capability; none is ever given up to keep bubblewrap running."""
    as_nobody = ("--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)) if os.geteuid() == 0 else ()
    drop = ("--cap-drop", "ALL")
    return (
        (*drop, "--unshare-user", "--disable-userns", *as_nobody),
        (*drop, "--unshare-user", *as_nobody),  # bubblewrap before 0.8
        drop,  # no user namespaces here: root, or a setuid bubblewrap
    )


def _find() -> str | None:
    # A plain PATH scan: `shutil.which` would import shutil (and lzma) into
    # the agent's start-up, where this probe runs.
    dirs = os.environ.get("PATH", os.defpath).split(os.pathsep)
    candidates = (os.path.join(d, "bwrap") for d in dirs if d)
    return next((c for c in candidates if os.access(c, os.X_OK) and os.path.isfile(c)), None)


def _works(bwrap: str, privileges: tuple[str, ...]) -> bool:
    try:
        probe = subprocess.run(
            [bwrap, *privileges, "--ro-bind", "/", "/", "--unshare-all", "--", "/bin/true"],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@functools.cache
def _probe() -> tuple[str, tuple[str, ...]] | None:
    found = _find()
    if found is None:
        return None
    return next(((found, p) for p in _privilege_sets() if _works(found, p)), None)


def bwrap_path() -> str | None:
    """The bubblewrap binary, when present and able to create a sandbox here
    that holds no privilege (unprivileged user namespaces can be disabled on
    a host)."""
    probe = _probe()
    return probe[0] if probe is not None else None


def bwrap_privileges() -> tuple[str, ...]:
    """The arguments that start a sandbox without privilege, as the probe
    found them; the strongest set when there is no working bubblewrap (a
    sandbox that cannot drop them then fails to start, never runs with them)."""
    probe = _probe()
    return probe[1] if probe is not None else _privilege_sets()[0]


def forget_probe() -> None:
    """Probe again on the next call (PATH or the host changed)."""
    _probe.cache_clear()
