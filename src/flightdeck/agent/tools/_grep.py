"""Grep: search file contents by regular expression.

Uses ripgrep when `rg` is on PATH and the sandbox works, a Python search
otherwise; both print the same shapes (`path`, `path:count`, `path:line:text`
with `path-line-text` context lines) with paths relative to the workspace.

ripgrep follows a link given as its path argument and opens directories by
path, so a directory swapped for a link while it walks would be searched. It
therefore runs only inside the sandbox (`_sandbox.py`), where the workspace
is mounted read-only and nothing outside it but a read-only /usr exists.
The Python search walks through directory descriptors (`_walk.py`) and
needs no sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from flightdeck.agent.tools._base import (
    Category,
    ToolFailure,
    ToolOutput,
    Workspace,
    arg_bool,
    arg_int,
    arg_str,
    truncate,
)
from flightdeck.agent.tools._glob import glob_regex
from flightdeck.agent.tools._read import looks_binary
from flightdeck.agent.tools._sandbox import SAFE_PATH, sandbox_argv
from flightdeck.agent.tools._walk import walk_files

Mode = Literal["files_with_matches", "content", "count"]
MODES: tuple[Mode, ...] = ("files_with_matches", "content", "count")
MAX_FILES = 200
MAX_CONTEXT = 1000  # lines of context either side


def _python_grep(
    ws: Workspace,
    regex: re.Pattern[str],
    base: Path,
    glob: str | None,
    mode: Mode,
    ctx: tuple[int, int],
) -> list[str]:
    name_filter = glob_regex(glob) if glob else None
    out: list[str] = []
    for found in walk_files(base, ws.root, hidden=False):
        path = found.path
        if name_filter and not name_filter.match(
            path.name if "/" not in (glob or "") else path.relative_to(base).as_posix()
        ):
            continue
        # As ripgrep does without --follow: links are not searched.
        data = found.read()
        if data is None or looks_binary(data):
            continue
        lines = data.decode("utf-8", errors="replace").splitlines()
        hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits:
            continue
        shown = ws.display(path)
        if mode == "files_with_matches":
            out.append(shown)
        elif mode == "count":
            out.append(f"{shown}:{len(hits)}")
        else:
            out.extend(_with_context(shown, lines, hits, ctx))
    return out


def _with_context(shown: str, lines: list[str], hits: list[int], ctx: tuple[int, int]) -> list[str]:
    before, after = ctx
    wanted: set[int] = set()
    for i in hits:
        wanted.update(range(max(i - before, 0), min(i + after, len(lines) - 1) + 1))
    out: list[str] = []
    hit_set, last = set(hits), None
    for i in sorted(wanted):
        if last is not None and i > last + 1:
            out.append("--")
        sep = ":" if i in hit_set else "-"
        out.append(f"{shown}{sep}{i + 1}{sep}{lines[i]}")
        last = i
    return out


def _sandboxed_rg(ws: Workspace) -> tuple[str, str] | None:
    """(bwrap, rg) when ripgrep can run confined; it must live under /usr, the
    only directory its sandbox shows besides the workspace."""
    import shutil

    rg = shutil.which("rg")
    bwrap = ws.sandbox.bwrap()
    if rg is None or bwrap is None:
        return None
    rg = os.path.realpath(rg)
    if not rg.startswith("/usr/"):
        return None
    return bwrap, rg


async def _rg(tools: tuple[str, str], ws: Workspace, args: list[str], base: Path) -> list[str]:
    # Searching the root without naming it keeps paths free of a "./" prefix,
    # the same shape the Python search prints. `--no-require-git` applies
    # .gitignore outside a git checkout too; `--sort path` keeps output stable.
    bwrap, rg = tools
    where = [] if base == ws.root else [ws.display(base)]
    env = {"PATH": SAFE_PATH}
    argv = [
        rg,
        "--no-config",
        "--no-heading",
        "--with-filename",
        "--no-require-git",
        "--sort",
        "path",
        "--color",
        "never",
        *args,
        "--",
        *where,
    ]
    confined = sandbox_argv(
        bwrap, ws.root, argv, env=env, writable=False, network=False, system=("/usr",)
    )
    proc = await asyncio.create_subprocess_exec(
        *confined,
        cwd=ws.root,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await proc.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        raise
    if proc.returncode not in (0, 1):
        raise ToolFailure(err.decode("utf-8", errors="replace").strip() or "rg failed")
    return out.decode("utf-8", errors="replace").splitlines()


def _context(value: int | None) -> int:
    return min(max(value or 0, 0), MAX_CONTEXT)


class GrepTool:
    name = "Grep"
    category: Category = "info"
    description = (
        "Search file contents with a regular expression. `output_mode` is "
        "`files_with_matches` (default), `content` (matching lines, with `-A`/`-B`/`-C` "
        "context) or `count`. `glob` filters file names; `-i` ignores case."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression"},
            "path": {"type": "string", "description": "File or directory (default: workspace)"},
            "glob": {"type": "string", "description": "Only files matching this glob"},
            "output_mode": {"type": "string", "enum": list(MODES)},
            "-i": {"type": "boolean", "description": "Case-insensitive"},
            "-A": {"type": "integer", "description": "Lines of context after a match"},
            "-B": {"type": "integer", "description": "Lines of context before a match"},
            "-C": {"type": "integer", "description": "Lines of context around a match"},
        },
        "required": ["pattern"],
    }

    def summary(self, args: dict[str, Any]) -> str:
        return f"Search for {args.get('pattern', '?')!r}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        pattern = arg_str(args, "pattern")
        base = ws.resolve(arg_str(args, "path", default=str(ws.root)))
        glob = args.get("glob")
        if glob is not None and not isinstance(glob, str):
            raise ToolFailure("argument glob must be a string")
        mode = args.get("output_mode", "files_with_matches")
        if mode not in MODES:
            raise ToolFailure(f"output_mode must be one of {', '.join(MODES)}")
        ignore_case = arg_bool(args, "-i")
        if "\x00" in pattern or (glob and "\x00" in glob):
            raise ToolFailure("pattern and glob cannot contain a NUL byte")
        around = _context(arg_int(args, "-C", 0))
        ctx = (_context(arg_int(args, "-B", around)), _context(arg_int(args, "-A", around)))
        if not base.exists():
            raise ToolFailure(f"Path not found: {args.get('path')}")
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolFailure(f"Invalid regular expression: {exc}") from None
        lines: list[str] | None = None
        rg = _sandboxed_rg(ws)
        if rg is not None:
            flags = ["-i"] if ignore_case else []
            flags += {"files_with_matches": ["-l"], "count": ["-c"], "content": ["-n"]}[mode]
            if mode == "content":
                flags += ["-B", str(ctx[0]), "-A", str(ctx[1])]
            if glob:
                flags += ["--glob", glob]
            try:
                lines = await _rg(rg, ws, [*flags, "-e", pattern], base)
            except ToolFailure as exc:
                # Python's regex dialect is the contract (lookarounds,
                # backreferences); ripgrep is only the fast path.
                if "regex parse error" not in str(exc):
                    raise
        if lines is None:
            lines = await asyncio.to_thread(_python_grep, ws, regex, base, glob, mode, ctx)
        if not lines:
            return ToolOutput("No matches found")
        if mode != "content" and len(lines) > MAX_FILES:
            lines = [*lines[:MAX_FILES], f"... ({len(lines) - MAX_FILES} more)"]
        return ToolOutput(truncate("\n".join(lines)))
