"""`flightdeck agent --json-stream` answers a first message sent the moment
`ready` is out without importing the Anthropic SDK (issue 14): the
`anthropic` provider's express path streams it with httpx2, and the warm-up
after `ready` builds only the express client. Nor does it import pydantic (the
protocol's models are msgspec Structs). The probe runs the real command
in a fresh interpreter and reports the imported modules when the first
`text_delta` is written, and again when the session ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes import FakeLLMServer, Turn

_PROBE = """
import json, sys
from flightdeck.agent import _transport
call, serve = _transport.LineWriter.__call__, _transport.serve
seen = []
def report(when):
    names = ("anthropic", "anthropic.types", "httpx2", "pydantic", "pydantic_core")
    mods = {m: m in sys.modules for m in names}
    print(json.dumps({"when": when, **mods}), file=sys.stderr, flush=True)
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


def test_a_message_sent_at_ready_is_answered_without_the_sdk(tmp_path: Path) -> None:
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
        assert server.received[0].headers["user-agent"].startswith("python-httpx2")
    assert "text_delta" in kinds
    reports = [json.loads(x) for x in err.decode().splitlines() if x.startswith('{"when"')]
    # No pydantic either (the protocol models are msgspec Structs): not for
    # the first reply, nor by the end of the plain session.
    sdk = {"anthropic": False, "anthropic.types": False, "httpx2": True}
    none = {"pydantic": False, "pydantic_core": False}
    assert reports == [{"when": "first-text", **sdk, **none}, {"when": "end", **sdk, **none}]
