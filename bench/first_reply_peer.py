"""Benchmark: spawn to first text, flightdeck's agent next to Claude Code, paired.

    .venv/bin/python bench/first_reply_peer.py [PAIRS]

Both run against the same loopback fake Anthropic server (tests/fakes), which
answers every model call with "hello there":

- A, Claude Code (pinned version, installed on demand into the git-ignored
  bench/.peers/ with npm): `claude -p hi --output-format stream-json
  --verbose`, HOME in a temporary directory, telemetry, update checks and
  other non-essential traffic off; timed from spawn to the first stdout line
  that carries text;
- B, `flightdeck agent --json-stream`: the message goes out the moment
  `ready` arrives; timed from spawn to the first `text_delta`.

Target (issue 14): B <= 0.5x A. Without npm, or if the install fails, the
comparison is skipped with the reason and only flightdeck's side is shown.
The flightdeck rows split its time into spawn -> `ready` and `ready` ->
first `text_delta` (the `anthropic` provider's express path: importing
httpx2 and building its client, then the request; no SDK import). The
`import anthropic` row is what that path no longer pays on the first reply.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _paired import PY, ROOT, machine, ms, paired, save

sys.path.insert(0, str(ROOT))

from tests.fakes import FakeLLMServer, Turn

FD = str(ROOT / ".venv" / "bin" / "flightdeck")
PEER = "@anthropic-ai/claude-code"
PEER_VERSION = "2.1.330"
PEERS = ROOT / "bench" / ".peers"
PEER_DIR = PEERS / f"claude-code-{PEER_VERSION}"
# Found in the CLI's own documentation of its environment: no telemetry,
# error reports, auto-update or other calls besides the model's.
QUIET = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def _cpu(pid: int) -> float:
    """User + system CPU seconds that process `pid` (all its threads) has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def claude_code() -> tuple[list[str] | None, str]:
    """The command that runs the pinned Claude Code, installing it if needed;
    (None, why) when it cannot be had."""
    binary = PEER_DIR / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None, "npm is not on PATH"
        PEER_DIR.mkdir(parents=True, exist_ok=True)
        cmd = [npm, "install", "--prefix", str(PEER_DIR), f"{PEER}@{PEER_VERSION}"]
        try:
            proc = subprocess.run(
                [*cmd, "--no-audit", "--no-fund"],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"npm install failed: {exc}"
        if proc.returncode != 0 or not binary.exists():
            return None, f"npm install failed: {proc.stderr.strip()[-500:]}"
    try:
        version = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`claude --version` failed: {exc}"
    if version.returncode != 0 or PEER_VERSION not in version.stdout:
        return None, f"`claude --version` said {version.stdout.strip()!r} {version.stderr[-300:]!r}"
    return [str(binary)], version.stdout.strip()


def _has_text(line: bytes) -> bool:
    """A stream-json line that carries assistant text (a whole message, or a
    partial delta when partial messages are on)."""
    try:
        event = json.loads(line)
    except ValueError:
        return False
    if event.get("type") == "assistant":
        blocks = event.get("message", {}).get("content", [])
        return any(b.get("type") == "text" and b.get("text") for b in blocks)
    if event.get("type") == "stream_event":
        delta = event.get("event", {}).get("delta", {})
        return bool(delta.get("type") == "text_delta" and delta.get("text"))
    return False


def peer_first_text(
    cmd: list[str], base_url: str, home: str, cpu: list[float]
) -> Callable[[], float]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "test",
        **QUIET,
    }
    argv = [*cmd, "-p", "hi", "--output-format", "stream-json", "--verbose"]

    def run() -> float:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=home
        )
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                if _has_text(line):
                    took = time.perf_counter() - start
                    cpu.append(_cpu(proc.pid))
                    return took
            raise RuntimeError(f"Claude Code wrote no text (exit {proc.wait()})")
        finally:
            proc.kill()
            proc.wait()

    return run


class Flightdeck:
    """`flightdeck agent --json-stream`, message sent at `ready`."""

    def __init__(self, base_url: str, home: str) -> None:
        # As Claude Code runs: its own HOME, no FLIGHTDECK_HOME, so the user
        # directories are found the way a host's start finds them.
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "ANTHROPIC_API_KEY": "test"}
        self.argv = [FD, "agent", "--json-stream", "--base-url", base_url, "--workspace", home]
        self.ready: list[float] = []
        self.cpu: list[float] = []

    def __call__(self) -> float:
        start = time.perf_counter()
        proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            line = proc.stdout.readline()
            assert line.startswith(b'{"type":"ready"'), line
            self.ready.append(time.perf_counter() - start)
            proc.stdin.write(b'{"type":"message","msg_id":"m1","input":"hi"}\n')
            proc.stdin.flush()
            for line in proc.stdout:
                if line.startswith(b'{"type":"text_delta"'):
                    took = time.perf_counter() - start
                    self.cpu.append(_cpu(proc.pid))
                    return took
            raise RuntimeError("flightdeck wrote no text_delta")
        finally:
            proc.stdin.close()
            proc.kill()
            proc.wait()


_IMPORT = (
    "import gc, sys, time\n"
    "if sys.argv[1] == 'paused': gc.disable()\n"
    "start = time.process_time()\n"
    "import anthropic, anthropic.types, anthropic.lib.streaming\n"
    "print(time.process_time() - start)\n"
)


def sdk_import_cpu(collector: str, runs: int) -> float:
    """Median CPU seconds of importing the Anthropic SDK in a fresh interpreter,
    with the garbage collector on or paused (as the warm-up imports it)."""
    times = [
        float(
            subprocess.run(
                [PY, "-c", _IMPORT, collector], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    cmd, about = claude_code()
    peer_cpu: list[float] = []
    with (
        tempfile.TemporaryDirectory() as fd_home,
        tempfile.TemporaryDirectory() as cc_home,
        FakeLLMServer() as server,
    ):
        server.add(*[Turn(text="hello there") for _ in range(4 * pairs + 4)])
        fd = Flightdeck(server.base_url, fd_home)
        fd()  # page cache, compiled bytecode
        if cmd is None:
            runs = [fd() for _ in range(pairs)]
            result = None
        else:
            peer = peer_first_text(cmd, server.base_url, cc_home, peer_cpu)
            peer()  # page cache for its binary, its first-run files under HOME
            fd.ready.clear()
            fd.cpu.clear()
            peer_cpu.clear()
            result = paired(peer, fd, pairs)
            runs = result.b
        unknown = sorted(set(server.unknown))
    sdk_on = sdk_import_cpu("on", pairs)
    sdk_paused = sdk_import_cpu("paused", pairs)
    ready = statistics.median(fd.ready)
    first = statistics.median(runs)
    lines = [
        "## first reply next to Claude Code (`bench/first_reply_peer.py`)",
        "",
        "Spawn to first text against the same loopback fake Anthropic server; "
        f"{pairs} alternating pairs; ratio = median of per-pair ratios (lowest-highest). "
        "Target (issue 14): flightdeck <= 0.5x Claude Code.",
        "",
        "| what | median |",
        "|---|---|",
    ]
    if result is None:
        lines += [f"| flightdeck spawn -> first `text_delta` | {ms(first)} |"]
    else:
        lines += [
            f"| Claude Code {PEER_VERSION} (`claude -p hi --output-format stream-json "
            f"--verbose`) spawn -> first text (A) | {ms(result.a_median)} |",
            f"| flightdeck (`agent --json-stream`, message at `ready`) spawn -> first "
            f"`text_delta` (B) | {ms(result.b_median)} |",
            f"| **B/A** | **{result.spread()}** |",
            f"| CPU (user + system, all threads) to first text: Claude Code "
            f"| {ms(statistics.median(peer_cpu))} |",
        ]
    lines += [
        f"| CPU to first text: flightdeck | {ms(statistics.median(fd.cpu))} |",
        f"| of which flightdeck spawn -> `ready` | {ms(ready)} |",
        f"| of which flightdeck `ready` -> first `text_delta` | {ms(first - ready)} |",
        f"| `import anthropic` alone, CPU, fresh interpreter: collector on / paused "
        f"(as the warm-up does) | {ms(sdk_on)} / {ms(sdk_paused)} |",
        "",
    ]
    if cmd is None:
        lines.append(f"Claude Code skipped: {about}.")
    else:
        lines.append(f"Claude Code: {about}; environment {' '.join(sorted(QUIET))} set to 1.")
    if unknown:
        lines.append(f"Requests the fake answered 404: {', '.join(unknown)}.")
    lines += ["", f"Machine: {machine()}."]
    save("first_reply_peer", "\n".join(lines))


if __name__ == "__main__":
    main()
