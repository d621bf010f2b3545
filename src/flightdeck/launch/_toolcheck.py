"""The environment's tools must be present at the versions the lock recorded.

Freeze pins each `environment.tools` entry to one catalog version in
`lock.resolvedCapabilitySet`. Before a tool step runs, the program it
invokes is mapped to its catalog tool; when the lock pinned that tool, the
program must be on the sandbox's PATH and `<program> --version` must report
the pinned version (the first dotted number in its output).
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Mapping

from flightdeck.flightplan import catalog
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._sandbox import SAFE_PATH

_VERSION = re.compile(r"\d+(?:\.\d+)+")


def tool_for(program: str) -> str | None:
    name = program.rsplit("/", 1)[-1]
    return next((tool.name for tool in catalog().values() if name in tool.programs), None)


async def found_version(program: str) -> str | None:
    try:
        process = await asyncio.create_subprocess_exec(
            program,
            "--version",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
        )
        output, _ = await asyncio.wait_for(process.communicate(), 30)
    except (OSError, TimeoutError):
        return None
    match = _VERSION.search(output.decode("utf-8", "replace"))
    return match.group(0) if match else None


async def check_tool_version(program: str, locked: Mapping[str, str]) -> dict[str, str] | None:
    """None when the lock pins nothing for this program; else what was checked.
    Raises `LaunchError` when the program is missing or at another version."""
    tool = tool_for(program)
    if tool is None or tool not in locked:
        return None
    path = shutil.which(program, path=SAFE_PATH)
    if path is None:
        raise LaunchError(
            "tool.missing",
            f"{program} ({tool}@{locked[tool]} in the lock) is not installed",
        )
    version = await found_version(path)
    if version != locked[tool]:
        raise LaunchError(
            "tool.version_mismatch",
            f"{program} is {version or 'of unknown version'}, the lock recorded"
            f" {tool}@{locked[tool]}",
            hint="run the plan in the environment freeze resolved (the locked image)",
        )
    return {"tool": tool, "version": version}
