"""Benchmark: agent start-up and first reply, paired and alternating.

    .venv/bin/python bench/agent_first_reply.py [PAIRS]

- spawn to `ready` next to `python -c pass`, pair by pair (target <= 10x);
- the first reply (message sent -> first `text_delta`, fake server in this
  process's thread) when the message is sent the moment `ready` arrives vs
  when it is sent 2 s later, pair by pair: the difference is the work that
  `flightdeck.llm.warm` does once `ready` is out (for the `anthropic`
  provider's express path: importing httpx2 and building its client; the SDK
  is not imported);
- idle RSS right after `ready` and after the warm-up has finished.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _paired import ROOT, machine, ms, paired, python_pass, save

sys.path.insert(0, str(ROOT))

from tests.fakes import FakeLLMServer, Turn

FD = str(ROOT / ".venv" / "bin" / "flightdeck")
WAIT = 2.0


def _spawn(base_url: str, home: str) -> subprocess.Popen[bytes]:
    # A HOME of its own and no FLIGHTDECK_HOME: the user directories are found
    # as on a host's start (bench/first_reply_peer.py runs it the same way).
    env = {k: v for k, v in os.environ.items() if k != "FLIGHTDECK_HOME"}
    env.update(HOME=home, ANTHROPIC_API_KEY="test")
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_DATA_HOME", None)
    return subprocess.Popen(
        [FD, "agent", "--json-stream", "--base-url", base_url, "--workspace", home],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    kib = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS"))
    return kib / 1024


class _Agent:
    def __init__(self, base_url: str, home: str) -> None:
        self.start = time.perf_counter()
        self.proc = _spawn(base_url, home)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.out, self.inp = self.proc.stdout, self.proc.stdin
        line = self.out.readline()
        assert line.startswith(b'{"type":"ready"'), line
        self.ready = time.perf_counter() - self.start
        self.rss_ready = _rss_mib(self.proc.pid)

    def first_delta(self) -> float:
        sent = time.perf_counter()
        self.inp.write(b'{"type":"message","msg_id":"m1","input":"hi"}\n')
        self.inp.flush()
        for line in self.out:
            if line.startswith(b'{"type":"text_delta"'):
                return time.perf_counter() - sent
        raise RuntimeError("no text_delta")

    def close(self) -> None:
        self.inp.close()
        self.proc.wait()


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rss: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as home, FakeLLMServer() as server:
        url = server.base_url
        for _ in range(2 * pairs + 2):
            server.add(Turn(text="hello there"))

        def ready() -> float:
            agent = _Agent(url, home)
            agent.close()
            return agent.ready

        def reply(wait: float) -> float:
            agent = _Agent(url, home)
            if wait:
                time.sleep(wait)
                rss.append((agent.rss_ready, _rss_mib(agent.proc.pid)))
            try:
                return agent.first_delta()
            finally:
                agent.close()

        ready()  # page cache
        start = paired(python_pass(), ready, pairs)
        first = paired(lambda: reply(0.0), lambda: reply(WAIT), pairs)
    rss_ready = sorted(r[0] for r in rss)[len(rss) // 2]
    rss_warm = sorted(r[1] for r in rss)[len(rss) // 2]
    lines = [
        "## agent start-up and first reply (`bench/agent_first_reply.py`)",
        "",
        f"`flightdeck agent --json-stream` against the fake Anthropic server; {pairs} "
        "alternating pairs per row; ratio = median of per-pair ratios (lowest-highest).",
        "",
        "| what | A | B | B/A |",
        "|---|---|---|---|",
        f"| spawn to `ready` (B) vs `python -c pass` (A); target <= 10x "
        f"| {ms(start.a_median)} | {ms(start.b_median)} | {start.spread()} |",
        f"| message -> first `text_delta`: sent at `ready` (A) vs sent {WAIT:.0f} s after "
        f"`ready` (B, warmed) | {ms(first.a_median)} | {ms(first.b_median)} "
        f"| {first.spread()} |",
        "",
        f"Idle RSS (median): {rss_ready:.1f} MiB right after `ready`, {rss_warm:.1f} MiB "
        f"{WAIT:.0f} s later, once the warm-up has finished.",
        "",
        f"Machine: {machine()}.",
    ]
    save("agent_first_reply", "\n".join(lines))


if __name__ == "__main__":
    main()
