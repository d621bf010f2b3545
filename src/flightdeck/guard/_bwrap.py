"""Finding a working bubblewrap, shared by the launch layer's tool steps and
the agent's Bash and Grep (neither may import the other)."""

from __future__ import annotations

import functools
import os
import subprocess
from typing import ClassVar


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


@functools.cache
def bwrap_path() -> str | None:
    """The bubblewrap binary, when present and able to create a sandbox here
    (unprivileged user namespaces can be disabled on a host)."""
    # A plain PATH scan: `shutil.which` would import shutil (and lzma) into
    # the agent's start-up, where this probe runs.
    dirs = os.environ.get("PATH", os.defpath).split(os.pathsep)
    candidates = (os.path.join(d, "bwrap") for d in dirs if d)
    found = next((c for c in candidates if os.access(c, os.X_OK) and os.path.isfile(c)), None)
    if found is None:
        return None
    try:
        probe = subprocess.run(
            [found, "--ro-bind", "/", "/", "--unshare-all", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None
