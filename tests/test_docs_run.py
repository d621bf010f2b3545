"""The docs run: every shell example README.md and docs/*.md tell a user to
run is run, as written, and must exit 0.

Fenced ```sh, ```bash, ```shell and ```console blocks (for console, the
`$ ` lines) are run in order, one bash process per block, in a copy of the
checkout with a temporary HOME and XDG directories and no FLIGHTDECK_HOME,
the way a new user would. A block that cannot run here says so in a comment
on the line before its fence: `<!-- docs-test: skip REASON -->` or
`<!-- docs-test: needs: WHAT -->` (a server, an API key).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^```([\w-]*)\s*$")
MARKER = re.compile(r"^<!--\s*docs-test:\s*(?P<what>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    script: str
    marker: str | None  # "skip REASON" / "needs: WHAT", or None: it runs

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def shell_blocks(path: Path) -> list[Block]:
    lines = path.read_text("utf-8").splitlines()
    blocks: list[Block] = []
    n = 0
    while n < len(lines):
        fence = FENCE.match(lines[n])
        if not fence:
            n += 1
            continue
        end = next((m for m in range(n + 1, len(lines)) if lines[m].startswith("```")), len(lines))
        if fence.group(1) in SHELLS:
            body = lines[n + 1 : end]
            if fence.group(1) == "console":
                body = [line[2:] for line in body if line.startswith("$ ")]
            before = next((lines[m] for m in range(n - 1, -1, -1) if lines[m].strip()), "")
            marker = MARKER.match(before)
            blocks.append(
                Block(path, n + 1, "\n".join(body), marker.group("what") if marker else None)
            )
        n = end + 1
    return blocks


ALL = [block for path in DOCS for block in shell_blocks(path)]
RUNNABLE_DOCS = sorted({b.path for b in ALL if b.marker is None}, key=lambda p: p.name)


def test_the_extractor_reads_markers_and_console_prompts(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\necho one\n```\n\n<!-- docs-test: needs: server -->\n```bash\ncurl x\n```\n"
        "```console\n$ echo two\ntwo\n```\n```python\nprint(3)\n```\n",
        "utf-8",
    )
    assert [(b.script, b.marker) for b in shell_blocks(page)] == [
        ("echo one", None),
        ("curl x", "needs: server"),
        ("echo two", None),
    ]


def test_every_excluded_block_says_why() -> None:
    for block in ALL:
        if block.marker is not None:
            assert re.fullmatch(r"(skip|needs:)\s+\S.*", block.marker), block.where


def test_the_readme_flow_is_run_not_skipped() -> None:
    run = "\n".join(b.script for b in ALL if b.path.name == "README.md" and b.marker is None)
    for command in ("keyring trust", "freeze", "verify", "launch"):
        assert f"flightdeck {command}" in run


def _checkout_copy(target: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _user_env(tmp: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("FLIGHTDECK_", "XDG_")) and not key.endswith("_API_KEY")
    }
    env["HOME"] = str(tmp / "home")
    for name in ("CONFIG", "DATA", "CACHE", "STATE"):
        env[f"XDG_{name}_HOME"] = str(tmp / "xdg" / name.lower())
    # `flightdeck` on PATH, as `source .venv/bin/activate` does.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.mark.parametrize("doc", RUNNABLE_DOCS, ids=lambda p: p.name)
def test_shell_examples_run_as_written(doc: Path, tmp_path: Path) -> None:
    checkout = _checkout_copy(tmp_path / "checkout")
    env = _user_env(tmp_path)
    # A block may rely on an earlier one of the same page (a key, an export).
    state = tmp_path / "state.sh"
    state.write_text("", "utf-8")
    for block in (b for b in ALL if b.path == doc and b.marker is None):
        script = f"set -euo pipefail\nsource {state}\n{block.script}\nexport -p > {state}\n"
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (
            f"{block.where} exited {done.returncode}\n{block.script}\n"
            f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
