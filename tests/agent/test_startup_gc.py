"""`flightdeck agent` pauses the cyclic garbage collector while it starts and
turns it back on once `ready` is written (JSON stream) or `initialize` is
answered (ACP): left off, cycles made during a long session would never be
freed. Each probe runs the real command in a fresh interpreter and reports
`gc.isenabled()` at two points."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.agent._startup import pause_gc, resume_gc

_JSON_STREAM = """
import gc, os, sys
from flightdeck.agent.stream import _early, _transport
flush, serve = _transport.LineWriter.flush, _transport.serve
write_line = _early.write_line
seen = []
def at_ready():
    if not seen:
        seen.append(True)
        print("at-ready", gc.isenabled(), file=sys.stderr, flush=True)
def first_flush(self):
    at_ready()
    flush(self)
def early_write(out, line):  # a plain start writes `ready` before the engine
    at_ready()
    write_line(out, line)
async def serving(*args, **kwargs):
    await serve(*args, **kwargs)
    # the provider warm-up pauses the collector while it imports the SDK
    # (flightdeck.llm.warm): once it has finished the collector must be on
    import threading
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and thread.daemon:
            thread.join(60)
    print("serving", gc.isenabled(), file=sys.stderr, flush=True)
_transport.LineWriter.flush = first_flush
_transport.serve = serving
_early.write_line = early_write
from flightdeck.cli import main
main(["agent", "--json-stream"])
"""

_ACP = """
import gc, sys
from flightdeck.agent.acp import _server
initialize, close = _server.FlightdeckAgent.initialize, _server.FlightdeckAgent.close
async def initializing(self, *args, **kwargs):
    print("at-initialize", gc.isenabled(), file=sys.stderr, flush=True)
    return await initialize(self, *args, **kwargs)
async def closing(self):
    print("after", gc.isenabled(), file=sys.stderr, flush=True)
    await close(self)
_server.FlightdeckAgent.initialize = initializing
_server.FlightdeckAgent.close = closing
from flightdeck.cli import main
main(["agent", "--acp"])
"""


def _states(probe: str, send: bytes, home: Path) -> list[str]:
    env = {**os.environ, "FLIGHTDECK_HOME": str(home), "ANTHROPIC_API_KEY": "test"}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=send,
        capture_output=True,
        cwd=home,
        env=env,
        timeout=60,
        check=False,
    )
    lines = done.stderr.decode(errors="replace").splitlines()
    return [
        line
        for line in lines
        if line.split(" ")[0] in {"at-ready", "serving", "at-initialize", "after"}
    ]


def test_json_stream_collects_garbage_again_once_ready_is_out(tmp_path: Path) -> None:
    assert _states(_JSON_STREAM, b"", tmp_path) == ["at-ready False", "serving True"]


def test_acp_collects_garbage_again_once_initialize_is_answered(tmp_path: Path) -> None:
    initialize = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    assert _states(_ACP, initialize, tmp_path) == ["at-initialize False", "after True"]


# In this process: what start-up built is frozen when collection resumes,
# so the first collection does not walk it.


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()


def test_resuming_freezes_what_start_up_built(collector: None) -> None:
    pause_gc()
    assert not gc.isenabled()
    built = [{"n": i} for i in range(1_000)]  # start-up's long-lived objects
    resume_gc()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)
    del built


def test_resume_does_nothing_when_it_did_not_pause(collector: None) -> None:
    gc.disable()  # something else paused it: pause_gc leaves it to them
    pause_gc()
    resume_gc()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
