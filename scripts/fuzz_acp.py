"""Send N malformed JSON-RPC frames to a real `flightdeck agent --acp` and
report what came back: `make fuzz-acp` (2,000 frames by default).

Frames: random bytes, brackets nested past the decoder's limit, requests
and notifications with wrong `jsonrpc`, ids, methods and params. Passes when
the agent answered a valid `initialize` sent after them, wrote only JSON to
stdout, no traceback to stderr, and exited 0 at end of input. Not part of
`make test` (tests/agent_acp/test_acp_process.py has fixed cases of each kind).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
FINAL = 999_999


def frame(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.2:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 60))).replace(b"\n", b" ")
    if roll < 0.25:
        return b"[" * rng.randint(1, 200_000)
    message: dict[str, object] = {
        "jsonrpc": rng.choice(["2.0", "1.0", 2, None]),
        "method": rng.choice([*METHODS, 5, None]),
    }
    if rng.random() < 0.6:
        message["id"] = rng.choice([1, "a", None, [], {}, 1.5, True, -(10**30)])
    if rng.random() < 0.8:
        message["params"] = rng.choice(PARAMS)
    return json.dumps(message).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    home = tempfile.mkdtemp(prefix="fd-fuzz-acp-")
    env = {**os.environ, "FLIGHTDECK_HOME": home, "ANTHROPIC_API_KEY": "x"}
    proc = subprocess.Popen(
        [str(FLIGHTDECK), "agent", "--acp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=lambda: out.extend(proc.stdout or []), daemon=True),
        threading.Thread(target=lambda: err.append((proc.stderr or b"").read()), daemon=True),
    ]
    for reader in readers:
        reader.start()
    started = time.monotonic()
    for _ in range(args.frames):
        proc.stdin.write(frame(rng) + b"\n")
    final = {
        "jsonrpc": "2.0",
        "id": FINAL,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
    proc.stdin.write(json.dumps(final).encode() + b"\n")
    proc.stdin.close()
    code = proc.wait(120)
    for reader in readers:
        reader.join(10)
    replies, not_json = [], 0
    for line in out:
        try:
            replies.append(json.loads(line))
        except ValueError:
            not_json += 1
    answered = any(isinstance(r, dict) and r.get("id") == FINAL and "result" in r for r in replies)
    stderr = b"".join(err).decode(errors="replace")
    report = {
        "frames": args.frames,
        "replies": len(replies),
        "non_json_stdout_lines": not_json,
        "answered_final_initialize": answered,
        "traceback": "Traceback" in stderr,
        "exit_code": code,
        "seconds": round(time.monotonic() - started, 2),
    }
    print(json.dumps(report, indent=2))
    ok = answered and not not_json and not report["traceback"] and code == 0
    print("fuzz-acp: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
