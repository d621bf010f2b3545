"""One MCP server connection, owned by its own task.

The SDK's client is an async context manager built on task groups, whose
scopes must be left by the task that entered them; so each server lives in a
task that connects, lists the tools, reports them, and then waits until it
is told to close. Tool calls from other tasks only send requests over the
connection's streams, which is safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.agent.mcp._config import McpServerConfig

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult

log = logging.getLogger("flightdeck.agent.mcp")


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]


class McpConnection:
    def __init__(self, config: McpServerConfig, workspace: Path) -> None:
        self.config = config
        self.workspace = workspace
        self._client: Client | None = None
        self._ready: asyncio.Future[list[RemoteTool]] | None = None
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def connect(self, timeout: float) -> list[RemoteTool]:
        """Connect and list the tools. Raises on failure or after `timeout` seconds."""
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.config.name}")
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except BaseException:
            await self.close(grace=0)  # still handshaking: nothing to wind down
            raise

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        if self._client is None or self._closing.is_set():
            raise ConnectionError(f"MCP server {self.config.name} is not connected")
        return await self._client.call_tool(name, arguments)

    async def close(self, grace: float = 5.0) -> None:
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), grace)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _serve(self) -> None:
        assert self._ready is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._make_client(stack))
                self._client = client
                tools = await _list_tools(client)
                if not self._ready.done():
                    self._ready.set_result(tools)
                await self._closing.wait()
        except BaseException as exc:  # reported through the future
            if not self._ready.done():
                self._ready.set_exception(ConnectionError(describe(exc)))
            elif not self._closing.is_set():
                log.warning("MCP server %s disconnected: %s", self.config.name, describe(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    def _make_client(self, stack: contextlib.AsyncExitStack) -> Client:
        from mcp import Client, StdioServerParameters
        from mcp_types import Implementation

        from flightdeck._version import __version__

        info = Implementation(name="flightdeck", version=__version__)
        if self.config.url is not None:
            if not self.config.headers:
                return Client(self.config.url, client_info=info)
            # The SDK's documented way to send headers: pass its HTTP client.
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {k: os.path.expandvars(v) for k, v in self.config.headers.items()}
            # the SDK's own defaults: 30 s, and 300 s to read (open SSE streams)
            http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
            stack.push_async_callback(http.aclose)  # after the client is left
            transport = streamable_http_client(self.config.url, http_client=http)
            return Client(transport, client_info=info)
        params = StdioServerParameters(
            command=self.config.command or "",
            args=list(self.config.args),
            env=dict(self.config.env) or None,
            cwd=self.config.cwd or self.workspace,
        )
        return Client(params, client_info=info)


async def _list_tools(client: Client) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            schema = dict(tool.input_schema or {"type": "object"})
            tools.append(RemoteTool(tool.name, tool.description or tool.title or "", schema))
        cursor = page.next_cursor
        if not cursor:
            return tools


def describe(exc: BaseException) -> str:
    """A one-line reason, looking inside the exception groups task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
