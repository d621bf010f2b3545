"""The ACP library is imported by `agent --acp` only: the JSON stream, the
terminal chat and every other command start without it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.agent_acp._harness import FLIGHTDECK


def _imported(args: list[str], cwd: Path, send: bytes = b"") -> set[str]:
    env = {"ANTHROPIC_API_KEY": "test", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", FLIGHTDECK, "agent", *args],
        input=send,
        capture_output=True,
        cwd=cwd,
        env={**env, "FLIGHTDECK_HOME": str(cwd / "home")},
        timeout=60,
    )
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.decode(errors="replace").splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_json_stream_does_not_import_acp(tmp_path: Path) -> None:
    modules = _imported(["--json-stream"], tmp_path)
    assert "flightdeck.agent.engine._session" in modules  # the probe saw the agent start
    assert not {m for m in modules if m == "acp" or m.startswith(("acp.", "flightdeck.agent.acp"))}


# `agent --acp` leaves through os._exit: the probe lists sys.modules just before.
# (-X importtime would miss modules imported through importlib.import_module,
# which the packages' lazy attributes use.)
_MODULES_AT_EXIT = """
import json, os, sys
leave = os._exit
def _exit(code):
    print(json.dumps(sorted(sys.modules)), file=sys.stderr, flush=True)
    leave(code)
os._exit = _exit
from flightdeck.cli import main
main(["agent", "--acp"])
"""


def test_acp_answers_initialize_without_the_engine(tmp_path: Path) -> None:
    # The client's handshake waits for nothing a session needs: the engine,
    # the JSON-stream protocol models, tools, providers, the session store.
    initialize = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    done = subprocess.run(
        [sys.executable, "-c", _MODULES_AT_EXIT],
        input=initialize,
        capture_output=True,
        cwd=tmp_path,
        env={
            "ANTHROPIC_API_KEY": "test",
            "PATH": "/usr/bin:/bin",
            "FLIGHTDECK_HOME": str(tmp_path),
        },
        timeout=60,
    )
    assert b'"protocolVersion"' in done.stdout  # initialize was answered
    modules = set(json.loads(done.stderr.decode().splitlines()[-1]))
    assert "flightdeck.agent.acp._server" in modules
    unwanted = {
        "flightdeck.agent.engine._session",
        "flightdeck.agent.protocol._models",
        "flightdeck.agent._app",
        "flightdeck.agent.engine._store",
        "flightdeck.agent.tools",
        "flightdeck.agent.acp._sessions",
        "flightdeck.agent.acp._bridge",
        "flightdeck.llm",
        "flightdeck.guard",
        "httpx",
        "anthropic",
        "mcp",
    }
    assert not unwanted & modules


def test_acp_refuses_json_stream_and_session_flags(tmp_path: Path) -> None:
    for extra in (["--json-stream"], ["--resume", "latest"], ["--session-id", "s1"]):
        done = subprocess.run(
            [FLIGHTDECK, "agent", "--acp", *extra],
            input=b"",
            capture_output=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == 2, extra
        assert b"--acp" in done.stderr and b"acp.schema" not in done.stderr
