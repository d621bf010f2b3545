"""Shared helpers for the agent part 2 process tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.agent._process import AgentProcess
from tests.fakes import FakeLLMServer

KEY = {"ANTHROPIC_API_KEY": "test"}
SERVERS = Path(__file__).resolve().parent / "servers"
NOTES_SERVER = SERVERS / "notes_server.py"


def stdio_server_toml(name: str = "notes") -> str:
    return (
        f"[mcp.servers.{name}]\ncommand = {str(sys.executable)!r}\nargs = [{str(NOTES_SERVER)!r}]\n"
    )


def make_ws(root: Path, toml: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\n" + toml)
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
