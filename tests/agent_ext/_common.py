"""Shared helpers for the agent part 2 process tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.agent._process import AgentProcess
from tests.fakes import FakeLLMServer

KEY = {"ANTHROPIC_API_KEY": "test"}
SERVERS = Path(__file__).resolve().parent / "servers"
NOTES_SERVER = SERVERS / "notes_server.py"
OAUTH_SERVER = SERVERS / "oauth_server.py"


@contextmanager
def oauth_server() -> Iterator[str]:
    """The MCP endpoint URL of a fresh OAuth-guarded loopback server."""
    proc = subprocess.Popen([sys.executable, str(OAUTH_SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:"), base
        yield f"{base}/mcp"
    finally:
        proc.kill()  # open event streams of agents still running would hold up a shutdown
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def authorize(sign_in_url: str) -> str:
    """Open a sign-in URL as a browser would: the redirect to the agent's callback
    (the test authorization server approves at once)."""
    import httpx2

    answer = httpx2.get(sign_in_url, timeout=10)
    assert answer.status_code in (302, 303, 307), answer.text
    location = str(answer.headers["location"])
    assert location.startswith("http://127.0.0.1:")
    return location


def stdio_server_toml(name: str = "notes") -> str:
    return (
        f"[mcp.servers.{name}]\ncommand = {str(sys.executable)!r}\nargs = [{str(NOTES_SERVER)!r}]\n"
    )


def make_ws(root: Path, toml: str = "", *, trusted: bool = True) -> Path:
    """A workspace whose flightdeck.toml holds `toml`; `trusted`: the user's
    config (this test's FLIGHTDECK_HOME) trusts it, so what it names starts."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\n" + toml)
    if trusted:
        from flightdeck.config import set_trust

        set_trust(root)
    return root


def anthropic(server: FakeLLMServer, ws: Path, *extra: str) -> AgentProcess:
    return AgentProcess(
        "--provider", "anthropic", "--base-url", server.base_url, *extra, env=KEY, workspace=ws
    )


def msg(msg_id: str, text: str = "hi") -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def tool_results_sent(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of an Anthropic request body's last message."""
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else []
    return [b for b in content if b.get("type") == "tool_result"]
