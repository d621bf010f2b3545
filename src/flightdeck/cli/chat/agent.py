"""`flightdeck agent`: the coding agent, as a JSON-Lines process for a host
(`--json-stream`) or as a chat in the terminal."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import click


@click.command()
@click.option("--json-stream", is_flag=True, help="Speak the JSON Stream Protocol on stdin/stdout.")
@click.option(
    "--acp",
    is_flag=True,
    help="Speak the Agent Client Protocol on stdin/stdout (Zed and other ACP clients).",
)
@click.option(
    "--provider",
    # Not a click.Choice: an unknown provider must reach the host as a
    # `config_error` event on stdout, not as a usage message on stderr.
    help="anthropic, openai, bedrock, vertex or local (default: [agent] provider, else anthropic).",
)
@click.option("--model", help="Model id (default: the provider's default model).")
@click.option("--max-tokens", type=int, help="Output token limit per model call.")
@click.option("--max-turns", type=int, help="Model calls allowed for one message.")
@click.option("--base-url", help="Provider endpoint (e.g. a local OpenAI-compatible server).")
@click.option("--system-prompt", help="Replace the built-in system prompt.")
@click.option("--auto-approve", is_flag=True, default=None, help="Start in yolo mode.")
@click.option(
    "--workspace",
    # Not a click.Path(file_okay=False): a workspace that is a file or missing
    # must reach the host as a `config_error` event too.
    help="Directory the tools work in (default: current directory).",
)
@click.option(
    "--trust-workspace",
    is_flag=True,
    default=None,
    help="Let the workspace's own files start what they name (its flightdeck.toml MCP"
    " servers, its .drivers/ code) this time; see `flightdeck config trust`.",
)
@click.option("--session-id", help="Start a new session with this id (error if it exists).")
@click.option("--resume", help="Resume a session by id, or `latest`.")
@click.option(
    "--list-tools",
    is_flag=True,
    help="List the tools the agent would offer (built-in, Spawn, MCP, manifest) and exit.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def agent(json_stream: bool, acp: bool, list_tools: bool, fmt: str, **flags: Any) -> None:
    """Run the coding agent.

    \b
    Examples:
      flightdeck agent                       # chat in the terminal
      flightdeck agent --json-stream --provider anthropic --max-turns 30
      flightdeck agent --json-stream --resume latest --workspace ./repo
      flightdeck agent --json-stream --provider openai --base-url http://localhost:8000/v1
      flightdeck agent --acp --provider anthropic   # for Zed (docs/acp.md)
      flightdeck agent --list-tools --workspace ./repo --format json

    Credentials come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY,
    AWS_* for bedrock, GOOGLE_APPLICATION_CREDENTIALS / VERTEX_PROJECT_ID /
    VERTEX_REGION for vertex). See docs/protocol.md for the protocol.
    """
    # The agent uses no pydantic plugins; looking them up scans every installed
    # distribution's entry points (~6 ms of start-up).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if json_stream or acp:
        from flightdeck.agent._startup import pause_gc

        pause_gc()  # until `ready` / `initialize` is out: flightdeck/agent/_startup.py
    if list_tools:
        from flightdeck.cli.chat._agent_tools import print_tools

        sys.exit(print_tools(flags, fmt))
    if json_stream and acp:
        raise click.UsageError("--json-stream and --acp cannot be used together")
    if acp:
        if flags.get("session_id") or flags.get("resume"):
            # ACP names sessions itself (session/new, session/load).
            raise click.UsageError("--session-id and --resume do not apply to --acp")
        from flightdeck.agent.acp import run_acp

        code = asyncio.run(run_acp(flags))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # as for --json-stream: no interpreter teardown
    if json_stream:
        from flightdeck.cli.chat._agent_stream import run_json_stream

        run_json_stream(flags)
    from flightdeck.agent.terminal._chat import run_terminal

    sys.exit(asyncio.run(run_terminal(flags)))
