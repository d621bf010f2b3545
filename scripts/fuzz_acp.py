"""Send N malformed JSON-RPC frames to a real `flightdeck agent --acp` and
report what came back: `make fuzz-acp` (2,000 frames by default).

Frames: random bytes, brackets nested past the decoder's limit, requests
and notifications with wrong `jsonrpc`, ids (booleans among them), methods
and params, `NaN`/`Infinity`/`1e999` in params, answers to no request, and
malformed answers to the agent's own pending requests. For those, the fuzzer
is an ACP client with the file system: it opens a session against a fake
model that keeps calling Write and Read, keeps a prompt running, and answers
the permission and `fs/*` requests the agent sends with a malformed answer
(tests/agent_acp/_malformed.py), an answer over the 16 MiB line limit, or
now and then a valid one.

Passes when every line on stdout was strict JSON (`json.loads` refusing
NaN and Infinity), every prompt sent was answered (a malformed answer fails
its request, so nothing hangs), the agent answered a valid `initialize` sent
last, wrote no traceback to stderr, and exited 0 at end of input. Not part
of `make test` (tests/agent_acp/ has fixed cases of each kind).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agent_acp._malformed import ALLOW, malformed_answers  # noqa: E402
from tests.fakes import FakeLLMServer, ToolCall, Turn  # noqa: E402

FLIGHTDECK = ROOT / ".venv" / "bin" / "flightdeck"
METHODS = ["initialize", "session/new", "session/prompt", "session/load", "session/cancel",
           "session/set_mode", "no/such", "fs/read_text_file", ""]  # fmt: skip
PARAMS: list[object] = [
    {}, [], None, "x",
    {"protocolVersion": 1}, {"protocolVersion": "1"}, {"protocolVersion": 10**40},
    {"cwd": "/tmp", "mcpServers": []}, {"cwd": "rel", "mcpServers": None}, {"cwd": 5},
    {"cwd": "/tmp", "mcpServers": [{}]}, {"sessionId": "x", "prompt": []},
    {"sessionId": "x", "prompt": [{"type": "text", "text": "hi"}]}, {"sessionId": 5},
]  # fmt: skip
CONSTANTS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"]
OVER_LIMIT = 16 * 1024 * 1024 + 16
FINAL = 999_999


def strict(line: bytes) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(name)

    return json.loads(line, parse_constant=refuse)


def frame(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.15:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 60))).replace(b"\n", b" ")
    if roll < 0.2:
        return b"[" * rng.randint(1, 200_000)
    if roll < 0.3:  # an answer to no request, with any id
        request_id = rng.choice([424242, "nope", True, False, None, 1.0, []])
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}}).encode()
    message: dict[str, object] = {
        "jsonrpc": rng.choice(["2.0", "1.0", 2, None]),
        "method": rng.choice([*METHODS, 5, None]),
    }
    if rng.random() < 0.6:
        message["id"] = rng.choice([1, "a", None, [], {}, 1.5, True, False, -(10**30)])
    if rng.random() < 0.8:
        message["params"] = rng.choice(PARAMS)
    line = json.dumps(message).encode()
    if roll < 0.45 and line.endswith(b"}"):  # a non-standard constant in it
        line = line[:-1] + b', "x": ' + rng.choice(CONSTANTS).encode() + b"}"
    return line


def answer(rng: random.Random, request: dict[str, Any], huge_left: int) -> tuple[bytes, str]:
    """A line answering one of the agent's requests, and its kind."""
    request_id = request["id"]
    roll = rng.random()
    if roll < 0.2:
        result: dict[str, Any] = {}
        if request["method"] == "session/request_permission":
            result = ALLOW
        elif request["method"] == "fs/read_text_file":
            result = {"content": "one\ntwo\n"}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode(), "valid"
    if roll < 0.25 and huge_left > 0:
        head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": ""}})
        return head[:-3].encode() + b"y" * OVER_LIMIT + b'"}}', "over the limit"
    shapes = malformed_answers(request_id)
    return shapes[rng.choice(sorted(shapes))], "malformed"


class Agent:
    """The process, its stdout judged line by line on a thread."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(FLIGHTDECK), "agent", "--acp", "--provider", "anthropic"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        # the agent's requests; an empty one when a prompt was answered (a wake-up)
        self.asks: queue.Queue[dict[str, Any]] = queue.Queue()
        self.answers: dict[Any, dict[str, Any]] = {}  # our request id -> its response
        self.lines = 0
        self.died = False
        self.not_strict: list[bytes] = []
        self.err: list[bytes] = []
        self.changed = threading.Condition()
        self.readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=lambda: self.err.append(self._stderr()), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _stderr(self) -> bytes:
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines += 1
            try:
                message = strict(line)
            except ValueError:
                self.not_strict.append(line[:200])
                continue
            if not isinstance(message, dict):
                self.not_strict.append(line[:200])
            elif "method" in message and "id" in message:
                self.asks.put(message)
            elif "method" not in message:
                with self.changed:
                    self.answers[message.get("id")] = message
                    self.changed.notify_all()
                if str(message.get("id")).startswith("p"):  # a prompt ended
                    self.asks.put({})

    def write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # the agent died: the report says so
            self.died = True

    def call(self, request_id: str, method: str, params: Any, seconds: float = 60) -> Any:
        self.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                               "params": params}).encode())  # fmt: skip
        return self.wait(request_id, seconds)

    def wait(self, request_id: str, seconds: float) -> Any:
        with self.changed:
            self.changed.wait_for(lambda: request_id in self.answers, seconds)
        return self.answers.get(request_id)


def _next_ask(agent: Agent, seconds: float) -> dict[str, Any] | None:
    """The agent's next request, waiting up to `seconds`; None when none
    came, or a prompt was answered first."""
    try:
        request = agent.asks.get(timeout=seconds) if seconds else agent.asks.get_nowait()
    except queue.Empty:
        return None
    return request or None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--huge", type=int, default=4, help="answers over the line limit")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="fd-fuzz-acp-"))
    server = FakeLLMServer().start()
    ws = home / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("on disk\n")
    (ws / "flightdeck.toml").write_text(
        "[agent]\nretry_delay = 0.01\nmax_retries = 0\n"
        f'[providers.anthropic]\nbase_url = "{server.base_url}"\n'
    )
    env = {**os.environ, "FLIGHTDECK_HOME": str(home), "ANTHROPIC_API_KEY": "x"}
    env.pop("ANTHROPIC_BASE_URL", None)
    agent = Agent(env)
    started = time.monotonic()
    fs = {"fs": {"readTextFile": True, "writeTextFile": True}}
    agent.call("init", "initialize", {"protocolVersion": 1, "clientCapabilities": fs})
    opened = agent.call("new", "session/new", {"cwd": str(ws), "mcpServers": []})
    sid = opened["result"]["sessionId"]
    prompts: list[str] = []
    kinds: dict[str, int] = {}
    huge_left = args.huge
    for index in range(args.frames):
        if agent.died:
            break
        running = prompts and prompts[-1] not in agent.answers
        if not running:
            calls = [ToolCall("Write", {"file_path": f"w{index}.txt", "content": "x"}),
                     ToolCall("Read", {"file_path": "f.txt"})]  # fmt: skip
            server.add(Turn(tool_calls=calls), Turn(text="ok"))
            prompts.append(f"p{index}")
            agent.write(json.dumps({"jsonrpc": "2.0", "id": prompts[-1], "method": "session/prompt",
                                    "params": {"sessionId": sid, "prompt": [
                                        {"type": "text", "text": "go"}]}}).encode())  # fmt: skip
        request = _next_ask(agent, 5 if rng.random() < 0.2 else 0)
        if request is None:
            line, kind = frame(rng), "random"
        else:
            line, kind = answer(rng, request, huge_left)
            huge_left -= kind == "over the limit"
        kinds[kind] = kinds.get(kind, 0) + 1
        agent.write(line)
    # What the agent still asks gets malformed answers until every prompt is answered.
    deadline = time.monotonic() + 120
    while (
        any(p not in agent.answers for p in prompts)
        and time.monotonic() < deadline
        and not agent.died
    ):
        request = _next_ask(agent, 0.5)
        if request is not None:
            agent.write(malformed_answers(request["id"])["error is a string"])
    unanswered = [p for p in prompts if p not in agent.answers]
    final = None if agent.died else agent.call(str(FINAL), "initialize", {"protocolVersion": 1})
    assert agent.proc.stdin is not None
    if not agent.died:
        agent.proc.stdin.close()
    code = agent.proc.wait(120)
    for reader in agent.readers:
        reader.join(10)
    server.close()
    stderr = b"".join(agent.err).decode(errors="replace")
    report = {
        "frames": args.frames,
        "died_early": agent.died,
        "frame_kinds": kinds,
        "stdout_lines": agent.lines,
        "not_strict_json_lines": len(agent.not_strict),
        "prompts": len(prompts),
        "prompts_unanswered": len(unanswered),
        "answered_final_initialize": bool(final and "result" in final),
        "dropped_answers_on_stderr": stderr.count("flightdeck agent: acp: dropped"),
        "traceback": "Traceback" in stderr,
        "exit_code": code,
        "seconds": round(time.monotonic() - started, 2),
    }
    print(json.dumps(report, indent=2))
    ok = (
        report["answered_final_initialize"]
        and not agent.not_strict
        and not unanswered
        and not report["traceback"]
        and code == 0
    )
    print("fuzz-acp: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
