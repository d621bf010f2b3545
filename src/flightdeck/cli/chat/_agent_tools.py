"""`flightdeck agent --list-tools`: print what the agent would offer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import click


def print_tools(flags: Mapping[str, Any], fmt: str) -> int:
    from flightdeck.agent._app import SetupError
    from flightdeck.agent.extensions._load import list_tools

    try:
        report = asyncio.run(list_tools(flags))
    except SetupError as exc:
        click.echo(f"flightdeck agent: {exc}", err=True)
        return 1
    if fmt == "json":
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    width = max(len(row["name"]) for row in report["tools"])
    for row in report["tools"]:
        asks = "  always asks" if row["always_ask"] else ""
        click.echo(f"{row['name']:<{width}}  {row['category']:<4}  {row['source']}{asks}")
    for name, server in report["mcp_servers"].items():
        state = "connected" if server["connected"] else f"unavailable: {server.get('error')}"
        click.echo(f"MCP server {name} ({server['transport']} {server['where']}): {state}")
    for problem in report["problems"]:
        click.echo(f"problem: {problem}", err=True)
    return 0
