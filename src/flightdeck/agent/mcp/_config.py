"""MCP servers from the configuration: `[mcp.servers.NAME]` tables.

A server is either a command run as a subprocess speaking MCP over stdio
(`command`, `args`, `env`, `cwd`) or a streamable HTTP endpoint (`url`, with
optional `headers`; `${NAME}` in a header value is taken from the
environment, so tokens need not be written in the file).
`[mcp] connect_timeout` (seconds) bounds start-up, not counting the time a
person takes to sign in to an OAuth server (`[mcp] sign_in_timeout`). A bad table is a problem
naming the server; the other servers are still read.

Each server remembers where it was named (`origin`): the user's own
`config.toml`, the workspace's `flightdeck.toml` (a table the workspace file
sets or changes, even one key of a user's server), or the host
(`add_mcp_server`, ACP `mcpServers`). Only workspace servers wait for the
user's trust (`flightdeck.config.decide_trust`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Origin = Literal["user", "workspace", "host"]
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_SIGN_IN_TIMEOUT = 300.0
# Provider tool names allow [a-zA-Z0-9_-]{1,64}.
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    origin: Origin = "user"

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def where(self) -> str:
        """Where the server comes from, for `ready.capabilities` and `--list-tools`."""
        if self.url:
            return self.url
        return " ".join([self.command or "", *self.args]).strip()


@dataclass(frozen=True)
class McpConfig:
    servers: tuple[McpServerConfig, ...] = ()
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    problems: tuple[str, ...] = ()
    sign_in_timeout: float = DEFAULT_SIGN_IN_TIMEOUT


def safe_name(raw: str) -> str:
    """A name fragment the providers accept."""
    return _UNSAFE.sub("_", raw) or "_"


def tool_name(server: str, tool: str) -> str:
    """The stable name the model sees: `mcp__<server>__<tool>` (at most 64 chars)."""
    return f"mcp__{safe_name(server)}__{safe_name(tool)}"[:64]


def parse_mcp_config(
    config: Mapping[str, Any], workspace_layer: Mapping[str, Any] | None = None
) -> McpConfig:
    """Read `[mcp]` of merged config data; `workspace_layer` is the workspace
    file's own data (`Config.project`), whose servers are marked `workspace`.
    Never raises; problems are collected."""
    named_there = _server_names(workspace_layer or {})
    section = config.get("mcp", {})
    if not isinstance(section, Mapping):
        return McpConfig(problems=("[mcp] must be a table",))
    problems: list[str] = []
    timeout = section.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append(f"[mcp] connect_timeout must be a positive number, got {timeout!r}")
        timeout = DEFAULT_CONNECT_TIMEOUT
    sign_in = section.get("sign_in_timeout", DEFAULT_SIGN_IN_TIMEOUT)
    if isinstance(sign_in, bool) or not isinstance(sign_in, int | float) or sign_in <= 0:
        problems.append(f"[mcp] sign_in_timeout must be a positive number, got {sign_in!r}")
        sign_in = DEFAULT_SIGN_IN_TIMEOUT
    servers = section.get("servers", {})
    if not isinstance(servers, Mapping):
        problems.append("[mcp.servers] must be a table")
        return McpConfig((), float(timeout), tuple(problems), float(sign_in))
    parsed: list[McpServerConfig] = []
    for name, table in servers.items():
        server, problem = _server(str(name), table)
        if problem:
            problems.append(f"MCP server {name}: {problem}")
        elif server is not None:
            if name in named_there:
                server = replace(server, origin="workspace")
            parsed.append(server)
    return McpConfig(tuple(parsed), float(timeout), tuple(problems), float(sign_in))


def _server_names(layer: Mapping[str, Any]) -> frozenset[str]:
    section = layer.get("mcp")
    servers = section.get("servers") if isinstance(section, Mapping) else None
    return frozenset(servers) if isinstance(servers, Mapping) else frozenset()


def _server(name: str, table: Any) -> tuple[McpServerConfig | None, str]:
    if not isinstance(table, Mapping):
        return None, f"[mcp.servers.{name}] must be a table"
    if table.get("enabled", True) is False:
        return None, ""
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        return None, "give exactly one of `command` (stdio) or `url` (streamable HTTP)"
    if url is not None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return None, f"url must be an http(s) URL, got {url!r}"
        headers = table.get("headers", {})
        if not isinstance(headers, Mapping) or not all(
            isinstance(v, str) for v in headers.values()
        ):
            return None, "headers must be a table of strings"
        return McpServerConfig(name, url=url, headers={str(k): v for k, v in headers.items()}), ""
    if not isinstance(command, str) or not command:
        return None, "command must be a non-empty string"
    args = table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None, "args must be a list of strings"
    env = table.get("env", {})
    if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
        return None, "env must be a table of strings"
    cwd = table.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        return None, "cwd must be a string"
    return McpServerConfig(name, command, tuple(args), {str(k): v for k, v in env.items()}, cwd), ""
