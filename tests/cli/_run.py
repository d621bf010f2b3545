"""Run the installed `flightdeck` command as a process, the way users do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FLIGHTDECK = Path(sys.executable).with_name("flightdeck")


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(FLIGHTDECK), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
