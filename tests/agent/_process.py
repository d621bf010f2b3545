"""Drive a real `flightdeck agent --json-stream` process: write command lines
to its stdin, read event lines from its stdout, with timeouts so a hang fails
the test instead of blocking it."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from flightdeck.agent.protocol import decode_event

FLIGHTDECK = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck")
# Whether this machine has bubblewrap decides whether an `info` about Bash
# running unconfined follows `ready`; `next()` passes it over so the other
# tests read the same lines everywhere (`raw` keeps it, for the tests of it).
SANDBOX_NOTICE = "Bash runs without a sandbox"


class AgentProcess:
    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        workspace: Path | None = None,
        cwd: Path | None = None,
    ) -> None:
        full_env = dict(os.environ)
        full_env.update(env or {})
        cmd = [FLIGHTDECK, "agent", "--json-stream", *args]
        if workspace is not None:
            cmd += ["--workspace", str(workspace)]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def send(self, command: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        line = command if isinstance(command, str) else json.dumps(command)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 20.0) -> dict[str, Any]:
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise EOFError(f"agent exited; stderr: {self.stderr()}")
            event: dict[str, Any] = json.loads(line)
            decode_event(line)  # stdout carries protocol events only, each a valid model
            if event["type"] != "info" or not event["message"].startswith(SANDBOX_NOTICE):
                return event

    def until(self, kind: str, timeout: float = 20.0) -> list[dict[str, Any]]:
        got = []
        while True:
            event = self.next(timeout)
            got.append(event)
            if event["type"] == kind:
                return got

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = 20.0) -> int:
        return self.proc.wait(timeout=timeout)

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
