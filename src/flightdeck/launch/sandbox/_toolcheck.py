"""The environment's tools must be present at the versions the lock recorded.

Freeze pins each `environment.tools` entry to one catalog version in
`lock.resolvedCapabilitySet`. Before a tool step runs, the program it
invokes is mapped to its catalog tool; when the lock pinned that tool, the
program must be on the sandbox's PATH and `<program> --version` must report
the pinned version (the first dotted number in its output).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from flightdeck.flightplan import catalog
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.sandbox._bwrap import SAFE_PATH, bwrap_argv

_VERSION = re.compile(r"\d+(?:\.\d+)+")


def tool_for(program: str) -> str | None:
    name = program.rsplit("/", 1)[-1]
    return next((tool.name for tool in catalog().values() if name in tool.programs), None)


async def found_version(program: str, inside: tuple[str, Path] | None = None) -> str | None:
    argv = [program, "--version"]
    if inside is not None:  # run in the image: (bwrap, rootfs)
        argv = bwrap_argv(inside[0], argv, mount=None, collect=None, env={}, rootfs=inside[1])
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
        )
        output, _ = await asyncio.wait_for(process.communicate(), 30)
    except (OSError, TimeoutError):
        return None
    match = _VERSION.search(output.decode("utf-8", "replace"))
    return match.group(0) if match else None


async def check_tool_version(
    program: str, locked: Mapping[str, str], *, inside: tuple[str, Path] | None = None
) -> dict[str, str] | None:
    """None when the lock pins nothing for this program; else what was checked.
    Raises `LaunchError` when the program is missing or at another version.
    `inside` (bwrap, rootfs): look and run inside the pinned image instead."""
    tool = tool_for(program)
    name = program.rsplit("/", 1)[-1]
    if (tool is None or tool not in locked) and name in locked:
        tool = name  # a composed image's program, pinned by the lock's Feature
    if tool is None or tool not in locked:
        return None
    path = _which(program, inside[1]) if inside else shutil.which(program, path=SAFE_PATH)
    if path is None:
        where = "in the image" if inside else "installed"
        raise LaunchError(
            "tool.missing",
            f"{program} ({tool}@{locked[tool]} in the lock) is not {where}",
        )
    version = await found_version(path, inside)
    if version != locked[tool]:
        raise LaunchError(
            "tool.version_mismatch",
            f"{program} is {version or 'of unknown version'}, the lock recorded"
            f" {tool}@{locked[tool]}",
            hint="run the plan in the environment freeze resolved (the locked image)",
        )
    return {"tool": tool, "version": version}


def _which(program: str, rootfs: Path) -> str | None:
    """Where `program` is on the sandbox PATH inside the image (the path as
    the sandbox sees it; links are followed by the sandbox, not here)."""
    if "/" in program:
        return program if os.path.lexists(rootfs / program.lstrip("/")) else None
    for folder in SAFE_PATH.split(":"):
        if os.path.lexists(rootfs / folder.lstrip("/") / program):
            return f"{folder}/{program}"
    return None
