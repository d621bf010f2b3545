"""Agent benchmarks: spawn-to-ready, streaming throughput, idle memory.

    .venv/bin/python bench/agent.py [--runs 15] [--deltas 50000]

- spawn to `ready`: median wall time from spawning `flightdeck agent
  --json-stream` to reading its `ready` line, next to `python -c pass` measured
  in the same run (target: under 150 ms at the median).
- streaming: the fake Anthropic server sends one reply of N text deltas as fast
  as it can; deltas per second forwarded by the agent (counted as `text_delta`
  lines read by the client) vs the raw Anthropic SDK stream consumed directly
  (target: at least 80% of raw).
- idle RSS of the agent process after `ready`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes import FakeLLMServer  # noqa: E402

PY = str(ROOT / ".venv" / "bin" / "python")
FD = str(ROOT / ".venv" / "bin" / "flightdeck")


def _env(home: str) -> dict[str, str]:
    return {**os.environ, "FLIGHTDECK_HOME": home, "ANTHROPIC_API_KEY": "test"}


def _spawn(base_url: str, workspace: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [FD, "agent", "--json-stream", "--base-url", base_url, "--workspace", workspace],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def spawn_to_ready(runs: int, base_url: str, workspace: str, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = _spawn(base_url, workspace, env)
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        times.append(time.perf_counter() - start)
        assert json.loads(line)["type"] == "ready", line
        proc.stdin.close()
        proc.wait()
    return times


def python_pass(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([PY, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return times


def idle_rss_kib(base_url: str, workspace: str, env: dict[str, str]) -> int:
    proc = _spawn(base_url, workspace, env)
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.readline()
    time.sleep(0.2)
    status = Path(f"/proc/{proc.pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    proc.stdin.close()
    proc.wait()
    return rss


class AgentRates:
    """One agent process; each `rate()` sends a message and counts the
    `text_delta` lines of its reply as they arrive."""

    def __init__(self, base_url: str, workspace: str, env: dict[str, str]) -> None:
        self.proc = _spawn(base_url, workspace, env)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.stdout.readline()
        self.sent = 0

    def rate(self) -> tuple[int, float]:
        self.sent += 1
        start = time.perf_counter()
        self.stdin.write(b'{"type":"message","msg_id":"m%d","input":"go"}\n' % self.sent)
        self.stdin.flush()
        count = 0
        for line in self.stdout:
            if line.startswith(b'{"type":"text_delta"'):
                count += 1
            elif line.startswith(b'{"type":"stream_end"'):
                break
        return count, count / (time.perf_counter() - start)

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait()


def raw_rate(client: object, loop: asyncio.AbstractEventLoop) -> tuple[int, float]:
    async def consume() -> tuple[int, float]:
        start = time.perf_counter()
        count = 0
        # the SDK's raw event stream, the lightest way to consume it
        stream = await client.messages.create(  # type: ignore[attr-defined]
            model="m", max_tokens=10, messages=[{"role": "user", "content": "go"}], stream=True
        )
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                count += 1
        return count, count / (time.perf_counter() - start)

    return loop.run_until_complete(consume())


def streaming(
    base_url: str, deltas: int, rounds: int, workspace: str, env: dict[str, str]
) -> tuple[float, float]:
    """Median deltas/s of the raw SDK and of the agent, measured alternately
    (so both see the same machine load); each starts with a warm-up reply."""
    import anthropic

    loop = asyncio.new_event_loop()
    client = anthropic.AsyncAnthropic(api_key="test", base_url=base_url, max_retries=0)
    agent = AgentRates(base_url, workspace, env)
    raw_rate(client, loop)
    agent.rate()
    raws, agents = [], []
    for _ in range(rounds):
        n, rate = raw_rate(client, loop)
        assert n == deltas, (n, deltas)
        raws.append(rate)
        n, rate = agent.rate()
        assert n == deltas, (n, deltas)
        agents.append(rate)
    agent.close()
    loop.close()
    return statistics.median(raws), statistics.median(agents)


class ServerProcess:
    """The fake model server in its own process (`python -m tests.fakes`), so
    neither measured consumer shares an interpreter with it."""

    def __init__(self, home: str, turns: list[dict[str, object]]) -> None:
        script = Path(home) / "script.json"
        script.write_text(json.dumps(turns))
        port_file = Path(home) / "port"
        self.proc = subprocess.Popen(
            [PY, "-m", "tests.fakes", "--script", str(script), "--port-file", str(port_file)],
            cwd=ROOT,
        )
        for _ in range(500):
            if port_file.exists():
                break
            time.sleep(0.01)
        self.base_url = f"http://127.0.0.1:{port_file.read_text()}"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--deltas", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, FakeLLMServer() as server:
        env = _env(home)
        workspace = tempfile.mkdtemp(dir=home)
        spawn_to_ready(2, server.base_url, workspace, env)  # warm the page cache
        ready = spawn_to_ready(args.runs, server.base_url, workspace, env)
        bare = python_pass(args.runs)
        rss = idle_rss_kib(server.base_url, workspace, env)
        turns: list[dict[str, object]] = [{"text": "warm"}] * 2
        turns += [{"deltas": args.deltas}] * (2 * args.rounds)
        streamer = ServerProcess(home, turns)
        try:
            raw, through = streaming(streamer.base_url, args.deltas, args.rounds, workspace, env)
        finally:
            streamer.close()
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    print(f"spawn to ready (median of {args.runs}): {ms(ready):.0f} ms")
    print(f"python -c pass (median of {args.runs}): {ms(bare):.0f} ms")
    print(f"idle RSS after ready: {rss / 1024:.1f} MiB")
    print(f"raw SDK stream: {raw:,.0f} deltas/s (median of {args.rounds} x {args.deltas})")
    print(f"through the agent: {through:,.0f} deltas/s ({through / raw:.0%} of raw)")


if __name__ == "__main__":
    main()
