"""List commands print tables with headers; NO_COLOR and FORCE_COLOR are
honoured; the live step table of `launch` leaves no empty or stale table
around an approval prompt. Run as processes, in a pipe or in a pty."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli._run import FLIGHTDECK, run

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "examples" / "flightplans" / "metrics-digest"
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colour and style (SGR), not cursor moves


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A home with a trusted key and metrics-digest@1.0.0 frozen."""
    tmp = tmp_path_factory.mktemp("tables")
    env = {
        "FLIGHTDECK_HOME": str(tmp / "home"),
        "LOCAL_TRACKER_DB": str(tmp / "tracker.sqlite3"),
        "FLIGHTDECK_SECRET_TRACKER": "token",
        "TMP_OUT": str(tmp / "out"),
    }
    (tmp / "bad").mkdir()
    (tmp / "bad" / "TOOL.md").write_text("---\nid: 7\n---\n", "utf-8")
    env["BAD"] = str(tmp / "bad")
    keys = tmp / "k"
    run("keys", "generate", "--out", str(keys), env=env)
    run("keyring", "trust", "github://acme", "--key", str(keys / "flightdeck.pub"), env=env)
    frozen = run(
        "freeze",
        str(PLAN / "SKILL.md"),
        "--signing-key",
        str(keys / "flightdeck.key"),
        "--publisher",
        "github://acme",
        "--version",
        "1.0.0",
        env=env,
    )
    assert frozen.returncode == 0, frozen.stderr
    yield env


def _in_pty(args: list[str], env: dict[str, str], answer: bytes | None = None) -> str:
    """Run with stdin/stdout/stderr on a pseudo-terminal; answer one prompt."""
    full = {**os.environ, "COLUMNS": "100", "LINES": "50", "TERM": "xterm", **env}
    for name in ("NO_COLOR", "FORCE_COLOR"):
        if name not in env:
            full.pop(name, None)
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execve(str(FLIGHTDECK), [str(FLIGHTDECK), *args], full)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the pty
            break
        if not chunk:
            break
        out += chunk
        if answer is not None and out.rstrip().endswith(b"[y/N]:"):
            os.write(fd, answer)
            answer = None
    os.waitpid(pid, 0)
    os.close(fd)
    return out.decode("utf-8", "replace")


def screen(raw: str) -> list[str]:
    """What a terminal shows after `raw`: enough of VT100 for rich's live
    display (cursor up, erase line, carriage return); other codes dropped."""
    lines, row, col = [""], 0, 0
    for token in re.split(r"(\x1b\[[0-9;?]*[A-Za-z]|\r|\n)", raw):
        if not token:
            continue
        if token == "\r":
            col = 0
        elif token == "\n":
            row += 1
            col = 0
            lines += [""] * (row + 1 - len(lines))
        elif token.startswith("\x1b["):
            count = int(token[2:-1] or 1) if token[2:-1].isdigit() else 1
            if token.endswith("A"):
                row = max(0, row - count)
            elif token.endswith("K"):
                lines[row] = ""
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token) :]
            col += len(token)
    return [line.rstrip() for line in lines if line.strip()]


def test_screen_follows_erasures() -> None:
    assert screen("a\r\nb\r\n\x1b[1A\x1b[2K\x1b[1A\x1b[2Kc\r\n") == ["c"]


def test_lists_have_headers_and_no_colour_in_a_pipe(store: dict[str, str]) -> None:
    skills = run("skills", "list", env=store)
    assert skills.returncode == 0
    header, *rest = skills.stdout.splitlines()
    assert header.split() == ["name", "version", "id", "publisher", "frozen"]
    assert any(line.split()[:2] == ["metrics-digest", "1.0.0"] for line in rest)
    keyring = run("keyring", "list", env=store)
    assert keyring.stdout.splitlines()[0].split() == ["for", "key", "id", "added", "state"]
    assert not ANSI.search(skills.stdout + keyring.stdout)


def test_force_color_colours_a_pipe_and_no_color_wins(store: dict[str, str]) -> None:
    forced = run("skills", "list", env={**store, "FORCE_COLOR": "1"})
    assert ANSI.search(forced.stdout)
    diagnostics = run("validate", store["BAD"], env={**store, "FORCE_COLOR": "1"})
    assert ANSI.search(diagnostics.stdout)
    both = run("skills", "list", env={**store, "FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert not ANSI.search(both.stdout)


def test_no_color_on_a_terminal(store: dict[str, str]) -> None:
    coloured = _in_pty(["validate", store["BAD"]], store)
    assert ANSI.search(coloured)  # a terminal gets colour by default...
    plain = _in_pty(["validate", store["BAD"]], {**store, "NO_COLOR": "1"})
    assert "error" in plain and not ANSI.search(plain)  # ...unless NO_COLOR
    table = _in_pty(["skills", "list"], {**store, "NO_COLOR": "1"})
    assert "metrics-digest" in table and not ANSI.search(table)


def test_live_table_leaves_nothing_stale_around_the_approval_prompt(
    store: dict[str, str],
) -> None:
    raw = _in_pty(
        ["launch", "metrics-digest@1.0.0", "--workspace", str(PLAN), "--out-dir", store["TMP_OUT"]],
        store,
        answer=b"y\n",
    )
    shown = screen(raw)
    prompt = next(n for n, line in enumerate(shown) if line.startswith("approve step file_issue"))
    # Nothing of the table above the prompt: no empty table, no stale copy.
    assert not any("step" in line and "status" in line for line in shown[:prompt]), shown
    # One table below it, the final one, with every step completed.
    headers = [n for n, line in enumerate(shown) if "step" in line and "status" in line]
    assert len(headers) == 1 and headers[0] > prompt, shown
    assert any("file_issue" in line and "completed" in line for line in shown)
    assert any(line.startswith("run run-") and "completed" in line for line in shown)


def test_runs_list_is_a_table(store: dict[str, str]) -> None:
    subprocess.run(
        [
            str(FLIGHTDECK),
            "launch",
            "metrics-digest@1.0.0",
            "--workspace",
            str(PLAN),
            "--approve",
            "file_issue",
            "--out-dir",
            store["TMP_OUT"],
        ],
        env={**os.environ, **store},
        capture_output=True,
        check=True,
        timeout=120,
    )
    listed = run("runs", "list", env=store)
    header, _rule, first, *_ = listed.stdout.splitlines()
    assert header.split() == ["run", "status", "plan", "started", "finished"]
    assert first.split()[1:3] == ["completed", "metrics-digest"]
