"""Glob: files matching a pattern, newest first, .gitignore respected, capped."""

from __future__ import annotations

import asyncio
import fnmatch
import re
from pathlib import Path
from typing import Any, ClassVar

from flightdeck.agent.tools._base import Category, ToolFailure, ToolOutput, Workspace, arg_str
from flightdeck.agent.tools._walk import walk_files

MAX_RESULTS = 100


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob where `**/` spans directories and `*` stays inside one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape("["))
                i += 1
            else:
                out.append(fnmatch.translate(pattern[i : end + 1])[4:-3])
                i = end + 1
        elif pattern[i] == "{":
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape("{"))
                i += 1
            else:
                choices = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(re.escape(c) for c in choices) + ")")
                i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _find(ws: Workspace, pattern: str, base: Path) -> str:
    matcher = glob_regex(pattern)
    # A pattern without a slash matches names at any depth, as ripgrep's globs do.
    anywhere = "/" not in pattern
    hits: list[tuple[float, Path]] = []
    for found in walk_files(base, ws.root):
        path = found.path
        rel = path.relative_to(base).as_posix() if path != base else path.name
        if matcher.match(path.name if anywhere else rel):
            # A link is listed by name; its mtime is the link's own, so
            # nothing about a target outside the workspace is looked at.
            hits.append((found.mtime(), path))
    if not hits:
        return "No files found"
    hits.sort(key=lambda h: (-h[0], str(h[1])))
    lines = [ws.display(p) for _, p in hits[:MAX_RESULTS]]
    if len(hits) > MAX_RESULTS:
        lines.append(f"... ({len(hits) - MAX_RESULTS} more files; narrow the pattern)")
    return "\n".join(lines)


class GlobTool:
    name = "Glob"
    category: Category = "info"
    description = (
        "Find files by glob pattern (e.g. `**/*.py`), newest first. Files ignored by "
        f".gitignore are skipped; at most {MAX_RESULTS} results."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern"},
            "path": {"type": "string", "description": "Directory to search (default: workspace)"},
        },
        "required": ["pattern"],
    }

    def summary(self, args: dict[str, Any]) -> str:
        return f"Find files matching {args.get('pattern', '?')}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        pattern = arg_str(args, "pattern")
        base = ws.resolve(arg_str(args, "path", default=str(ws.root)))
        if not base.is_dir():
            raise ToolFailure(f"Not a directory: {args.get('path')}")
        return ToolOutput(await asyncio.to_thread(_find, ws, pattern, base))
