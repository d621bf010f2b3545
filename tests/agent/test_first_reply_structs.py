"""A plain first reply of `flightdeck agent --json-stream` creates no
dataclass in flightdeck's own modules (issue 14): Python 3.11's `@dataclass`
writes each class's methods as source text and `exec`s it (0.3-0.6 ms a
class), where a `msgspec.Struct` class is built in C. The probe wraps
`dataclasses._process_class` before anything is imported and reports, when
the first `text_delta` is written and when the session ends, the flightdeck
classes it was asked to make."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes import FakeLLMServer, Turn

# Dataclasses deliberately left on the first-reply path: none.
LEFT: list[str] = []

_PROBE = """
import dataclasses, json, sys
made = []
process = dataclasses._process_class
def wrapped(cls, *args, **kwargs):
    if cls.__module__.split(".")[0] == "flightdeck":
        made.append(f"{cls.__module__}.{cls.__qualname__}")
    return process(cls, *args, **kwargs)
dataclasses._process_class = wrapped
from flightdeck.agent import _transport
call, serve = _transport.LineWriter.__call__, _transport.serve
seen = []
def report(when):
    print(json.dumps({"when": when, "made": sorted(made)}), file=sys.stderr, flush=True)
def spy(self, event):
    if not seen and getattr(event, "type", None) == "text_delta":
        seen.append(True)
        report("first-text")
    call(self, event)
async def serving(*args, **kwargs):
    await serve(*args, **kwargs)
    report("end")
_transport.LineWriter.__call__ = spy
_transport.serve = serving
from flightdeck.cli import main
main(["agent", "--json-stream", "--base-url", sys.argv[1], "--workspace", sys.argv[2]])
"""


def test_a_plain_first_reply_creates_no_flightdeck_dataclass(tmp_path: Path) -> None:
    env = {**os.environ, "FLIGHTDECK_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "test"}
    with FakeLLMServer([Turn(text="hello there")]) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", _PROBE, server.base_url, str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            assert proc.stdout.readline().startswith(b'{"type":"ready"')
            proc.stdin.write(b'{"type":"message","msg_id":"m1","input":"hi"}\n')
            proc.stdin.flush()
            kinds = []
            for line in proc.stdout:
                kinds.append(json.loads(line)["type"])
                if kinds[-1] == "stream_end":
                    break
            proc.stdin.close()
            proc.wait(timeout=60)
            assert proc.stderr is not None
            err = proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "text_delta" in kinds
    reports = [json.loads(x) for x in err.decode().splitlines() if x.startswith('{"when"')]
    assert reports == [{"when": "first-text", "made": LEFT}, {"when": "end", "made": LEFT}]
