"""What a plain first reply of `flightdeck agent --json-stream` costs the
process (issue 14). A message sent the moment `ready` is out is answered
without importing the Anthropic SDK (the `anthropic` provider's express path
streams it with httpx2, and the warm-up after `ready` builds only the express
client), without pydantic (the protocol's models are msgspec Structs), and
without creating a dataclass in flightdeck's own modules (Python 3.11's
`@dataclass` `exec`s each class's methods as source text, 0.3-0.6 ms a class,
where a `msgspec.Struct` class is built in C). One probe runs the real
command in a fresh interpreter and reports, when the first `text_delta` is
written and when the session ends, the imported modules and the flightdeck
dataclasses it was asked to make (it wraps `dataclasses._process_class`
before anything is imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
from flightdeck.agent.stream import _transport
call, serve = _transport.LineWriter.__call__, _transport.serve
seen = []
def report(when):
    names = ("anthropic", "anthropic.types", "httpx2", "pydantic", "pydantic_core")
    mods = {m: m in sys.modules for m in names}
    print(json.dumps({"when": when, **mods, "made": sorted(made)}), file=sys.stderr, flush=True)
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


def _first_reply(tmp_path: Path) -> tuple[list[str], list[dict[str, Any]], str]:
    """The event types of the reply, the probe's two reports, and the
    user agent the model call came with."""
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
        agent = server.received[0].headers["user-agent"]
    reports = [json.loads(x) for x in err.decode().splitlines() if x.startswith('{"when"')]
    return kinds, reports, agent


def test_a_message_sent_at_ready_is_answered_without_the_sdk(tmp_path: Path) -> None:
    kinds, reports, agent = _first_reply(tmp_path)
    assert agent.startswith("python-httpx2")
    assert "text_delta" in kinds
    # No pydantic either: not for the first reply, nor by the end of the session.
    sdk = {"anthropic": False, "anthropic.types": False, "httpx2": True}
    none = {"pydantic": False, "pydantic_core": False}
    assert [{k: r[k] for k in (*sdk, *none, "when")} for r in reports] == [
        {"when": "first-text", **sdk, **none},
        {"when": "end", **sdk, **none},
    ]


def test_a_plain_first_reply_creates_no_flightdeck_dataclass(tmp_path: Path) -> None:
    kinds, reports, _ = _first_reply(tmp_path)
    assert "text_delta" in kinds
    assert [(r["when"], r["made"]) for r in reports] == [("first-text", LEFT), ("end", LEFT)]
