"""Replays of AionUi's clients for aionrs (issue 13), as facts about them:

- spawn: `--json-stream --provider P --model M [--max-tokens N] [--max-turns N]
  [--auto-approve] (--resume ID | --session-id ID) [--base-url URL]`, the URL
  with a trailing `/v1` stripped; credentials in the environment
  (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`); the working directory is the
  workspace (no `--workspace`); for the official OpenAI host it writes
  `[providers.openai.compat] max_tokens_field = "max_completion_tokens"` to
  `<workspace>/.aionrs.toml` first.
- the current client sends `message` with `content`, the earlier one with
  `input`; `files` is a list of paths; `init_history` carries preset rules
  after `ready` and the last messages before a `stop`; `ping` while a turn
  runs; `set_config` with `model`, `thinking`, `thinking_budget`, `effort`;
  `tool_approve` with `scope`, `tool_deny` with `reason` (possibly empty);
  `add_mcp_server` for its stdio servers before the first message.
- a failed `--resume ID` is retried as `--session-id ID`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent._process import AgentProcess
from tests.fakes import FakeLLMServer


def workspace(root: Path, compat: str = "") -> Path:
    ws = root / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\n")
    if compat:
        (ws / ".aionrs.toml").write_text(compat)
    return ws


def spawn(
    server: FakeLLMServer,
    ws: Path,
    *,
    provider: str = "openai",
    model: str = "gpt-test",
    session: tuple[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> AgentProcess:
    """AionUi's spawn: flags, environment and working directory."""
    args = ["--provider", provider, "--model", model, "--max-tokens", "2000", "--max-turns", "8"]
    args += list(extra)
    if session is not None:
        args += list(session)
    # AionUi strips a trailing /v1; the fake serves both APIs under /v1
    args += ["--base-url", server.base_url]
    key = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    return AgentProcess(*args, env={key: "sk-aionui"}, cwd=ws)


def content(msg_id: str, text: str, files: list[str] | None = None) -> dict[str, Any]:
    """The current client's message shape."""
    command: dict[str, Any] = {"type": "message", "msg_id": msg_id, "content": text}
    if files is not None:
        command["files"] = files
    return command


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["type"] == "text_delta")


def errors(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "error"]
