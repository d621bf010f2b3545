"""Drive `flightdeck agent --acp` line by line, as a hostile client would.

The library's client (`_harness.py`) only writes well-formed frames; these
tests need to write any bytes, answer the agent's own requests with
malformed responses, and check that every line the agent writes is strict
JSON (`json.loads` refusing `NaN` and `Infinity`). `RawAgent` is
synchronous: a thread reads stdout into a queue, `next` takes one message,
`request` sends one and answers whatever the agent asks meanwhile.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agent_acp._harness import FLIGHTDECK

Answer = Callable[[dict[str, Any]], bytes | dict[str, Any] | None]


def strict_json(line: bytes) -> Any:
    """`json.loads` as RFC 8259 has it: NaN, Infinity, -Infinity refused."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


def allow_all(request: dict[str, Any]) -> dict[str, Any] | None:
    """The well-behaved client: allows once, reads the disk."""
    if request["method"] == "session/request_permission":
        outcome = {"outcome": "selected", "optionId": "allow_once"}
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": outcome}}
    if request["method"] == "fs/read_text_file":
        text = Path(request["params"]["path"]).read_text()
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"content": text}}
    if request["method"] == "fs/write_text_file":
        return {"jsonrpc": "2.0", "id": request["id"], "result": {}}
    return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}


class RawAgent:
    def __init__(self, env: dict[str, str], *args: str) -> None:
        full = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_BASE_URL"}
        # The agent's FLIGHTDECK_HOME: a workspace is trusted in its config.
        self.home = Path(env["FLIGHTDECK_HOME"]) if "FLIGHTDECK_HOME" in env else None
        self.proc = subprocess.Popen(
            [FLIGHTDECK, "agent", "--acp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**full, **env},
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._stderr: list[bytes] = []
        self.notifications: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []  # the agent's requests, in order
        self._next_id = 1000
        self._readers = [
            threading.Thread(target=self._pump, daemon=True),
            threading.Thread(target=self._drain_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def saw(self, text: str, limit: float = 15.0) -> bool:
        """Whether `text` reaches stderr: the agent writes a line there before
        the answer that follows it on stdout, but another thread reads it."""
        deadline = time.monotonic() + limit  # a bound on a hang, not a timing check
        while text not in self.stderr:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: bytes | dict[str, Any]) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.write(data + b"\n")

    def next(self, seconds: float = 30.0) -> dict[str, Any]:
        """The agent's next message; a line that is not strict JSON fails."""
        line = self._lines.get(timeout=seconds)
        if not line:
            self._lines.put(line)  # for the next call too
            raise AssertionError(f"the agent exited: {self.proc.wait(10)}\n{self.stderr}")
        value = strict_json(line)
        assert isinstance(value, dict), line
        return value

    def request(
        self,
        method: str,
        params: Any,
        answer: Answer = allow_all,
        seconds: float = 30.0,
    ) -> dict[str, Any]:
        """Send a request; its response. The agent's requests meanwhile are
        answered by `answer` (None: not answered)."""
        self._next_id += 1
        sent = self._next_id
        self.send({"jsonrpc": "2.0", "id": sent, "method": method, "params": params})
        return self.until(lambda m: m.get("id") == sent and "method" not in m, answer, seconds)

    def until(
        self,
        wanted: Callable[[dict[str, Any]], bool],
        answer: Answer = allow_all,
        seconds: float = 30.0,
    ) -> dict[str, Any]:
        """Read (answering the agent's requests) up to a message `wanted`."""
        while True:
            message = self.next(seconds)
            if wanted(message):
                return message
            if "method" in message and "id" in message:
                self.asked.append(message)
                reply = answer(message)
                if reply is not None:
                    self.send(reply)
            elif "method" in message:
                self.notifications.append(message)

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        return [
            n["params"]["update"]
            for n in self.notifications
            if n["method"] == "session/update" and n["params"]["sessionId"] == session_id
        ]

    def close(self) -> int:
        """End of input: the exit code; every line left must be strict JSON."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(30)
        for reader in self._readers:
            reader.join(10)
        while line := self._lines.get(timeout=10):
            strict_json(line)
        return code
