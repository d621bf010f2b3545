"""One MCP server connection, owned by its own task.

The SDK's client is an async context manager built on task groups, whose
scopes must be left by the task that entered them; so each server lives in a
task that connects, lists the tools, reports them, and then waits until it
is told to close. Tool calls from other tasks only send requests over the
connection's streams, which is safe.

What the server starts is handed to hooks the owner sets: a changed tool
list (a `notifications/tools/list_changed`, or on a 2026-07-28 connection an
event of the `subscriptions/listen` stream opened for it) is listed again and
given to `on_tools_changed`; an elicitation goes to `elicit`, and is declined
when no one is there to ask; a `roots/list` is answered with the session's
workspace. An HTTP server without an `Authorization`
header of its own gets the SDK's OAuth provider (`_auth.py`): its sign-in
URL goes to `sign_in`, and start-up's timeout waits while a person signs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.agent.mcp._config import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SIGN_IN_TIMEOUT,
    McpServerConfig,
)

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.context import ClientRequestContext
    from mcp.client.session import IncomingMessage
    from mcp.shared.dispatcher import ProgressFnT
    from mcp_types import (
        CallToolResult,
        ElicitRequestParams,
        ElicitResult,
        ErrorData,
        GetPromptResult,
        ListRootsResult,
        Prompt,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
    )

    from flightdeck.agent.mcp._auth import SignIn, SignInFlow


log = logging.getLogger("flightdeck.agent.mcp")


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]


class McpConnection:
    def __init__(
        self,
        config: McpServerConfig,
        workspace: Path,
        sign_in: SignIn | None = None,
        sign_in_timeout: float = DEFAULT_SIGN_IN_TIMEOUT,
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.sign_in = sign_in
        self.sign_in_timeout = sign_in_timeout
        self._flow: SignInFlow | None = None
        self._client: Client | None = None
        self._ready: asyncio.Future[list[RemoteTool]] | None = None
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.on_tools_changed: Callable[[McpConnection, list[RemoteTool]], None] | None = None
        self.elicit: Callable[[str, ElicitRequestParams], Awaitable[ElicitResult]] | None = None
        self._relisting: asyncio.Task[None] | None = None
        self._relist_again = False
        # bounds a re-listing a finished call waits for, as it bounds the first
        self.connect_timeout = DEFAULT_CONNECT_TIMEOUT
        self.resources = False  # the server advertises `resources`
        self.protocol_version: str | None = None  # the MCP revision negotiated
        self.prompts: list[Prompt] = []  # listed at connect, again when they change
        self.on_prompts_changed: Callable[[McpConnection], None] | None = None
        self._prompt_listings: set[asyncio.Task[None]] = set()

    async def connect(self, timeout: float) -> list[RemoteTool]:
        """Connect and list the tools. Raises on failure, or `ConnectionError`
        after `timeout` seconds (not counting a person signing in)."""
        self.connect_timeout = timeout
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.config.name}")
        try:
            while True:
                try:
                    return await asyncio.wait_for(asyncio.shield(self._ready), timeout)
                except TimeoutError:
                    # A person signing in is not a server too slow to start:
                    # the sign-in has its own limit; then the handshake gets
                    # its time again.
                    if self._flow is None or not self._flow.waiting:
                        raise ConnectionError(
                            f"no answer within {timeout:g} s ([mcp] connect_timeout)"
                        ) from None
                    signed_in = asyncio.ensure_future(self._flow.signed_in.wait())
                    waits: set[asyncio.Future[Any]] = {self._ready, signed_in}
                    try:
                        await asyncio.wait(waits, return_when="FIRST_COMPLETED")
                    finally:
                        signed_in.cancel()
        except BaseException:
            await self.close(grace=0)  # still handshaking: nothing to wind down
            raise

    async def call(
        self, name: str, arguments: dict[str, Any], progress: ProgressFnT | None = None
    ) -> CallToolResult:
        if self._client is None or self._closing.is_set():
            raise ConnectionError(f"MCP server {self.config.name} is not connected")
        return await self._client.call_tool(name, arguments, progress_callback=progress)

    async def settled(self) -> None:
        """Wait (at most `connect_timeout`) for a re-listing of the tools the
        server asked for, so the model request built next offers its new
        list. A call ends after the server's `tools/list_changed` sent during
        it was read (one stream, in order): a turn's tool result waits here."""
        await asyncio.sleep(0)  # let notifications read before the answer start their listing
        task = self._relisting
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), self.connect_timeout)
        except TimeoutError:
            log.warning(
                "MCP server %s: tools not listed again within %g s; the next request offers"
                " the old list",
                self.config.name,
                self.connect_timeout,
            )

    async def list_resources(self) -> tuple[list[Resource], list[ResourceTemplate]]:
        client = self._connected()
        resources: list[Resource] = []
        cursor: str | None = None
        while True:
            page = await client.list_resources(cursor=cursor, cache_mode="refresh")
            resources.extend(page.resources)
            if not (cursor := page.next_cursor):
                break
        templates: list[ResourceTemplate] = []
        cursor = None
        try:
            while True:
                listed = await client.list_resource_templates(cursor=cursor, cache_mode="refresh")
                templates.extend(listed.resource_templates)
                if not (cursor := listed.next_cursor):
                    break
        except Exception as exc:  # templates are optional; the resources stand
            log.info("MCP server %s: no resource templates: %s", self.config.name, describe(exc))
        return resources, templates

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> GetPromptResult:
        return await self._connected().get_prompt(name, arguments)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        return await self._connected().read_resource(uri)

    def _connected(self) -> Client:
        if self._client is None or self._closing.is_set():
            raise ConnectionError(f"MCP server {self.config.name} is not connected")
        return self._client

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
                self.protocol_version = client.protocol_version
                tools = await _list_tools(client)
                caps = client.session.server_capabilities
                self.resources = caps is not None and caps.resources is not None
                if caps is not None and caps.prompts is not None:
                    self.prompts = await _list_prompts(client)
                if not self._ready.done():
                    self._ready.set_result(tools)
                listener = asyncio.create_task(self._listen(client))
                try:
                    await self._closing.wait()
                finally:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
        except BaseException as exc:  # reported through the future
            if not self._ready.done():
                # The transport may wrap what the sign-in raised: report that.
                failed: ConnectionError | None = self._flow.error if self._flow else None
                failed = failed or _sign_in_error(exc)
                self._ready.set_exception(failed or ConnectionError(describe(exc)))
            elif not self._closing.is_set():
                log.warning("MCP server %s disconnected: %s", self.config.name, describe(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None
            if self._relisting is not None:
                self._relisting.cancel()
            for listing in list(self._prompt_listings):
                listing.cancel()
            if self._flow is not None:
                await self._flow.close()

    # ---- what the server starts -------------------------------------------------

    async def _listen(self, client: Client) -> None:
        """On a 2026-07-28 connection a server tells of changed tools and
        prompts only to a `subscriptions/listen` stream; older ones notify
        (see `_on_message`)."""
        caps = client.session.server_capabilities
        tools = caps is not None and caps.tools is not None and bool(caps.tools.list_changed)
        prompts = caps is not None and caps.prompts is not None and bool(caps.prompts.list_changed)
        if not (tools or prompts):
            return
        from mcp.client.subscriptions import ListenNotSupportedError, PromptsListChanged

        try:
            async with client.listen(
                tools_list_changed=tools, prompts_list_changed=prompts
            ) as subscription:
                async for event in subscription:
                    if isinstance(event, PromptsListChanged):
                        self._prompts_changed()
                    else:
                        self._tools_changed()
        except ListenNotSupportedError:
            return  # an older protocol: the notification comes on its own
        except Exception as exc:  # the subscription is a nicety, not the connection
            log.info("MCP server %s: no change events: %s", self.config.name, describe(exc))

    async def _on_message(self, message: IncomingMessage) -> None:
        from mcp_types import PromptListChangedNotification, ToolListChangedNotification

        # Listed in a task: awaiting a request here would block the loop
        # that reads its answer.
        if isinstance(message, ToolListChangedNotification):
            self._tools_changed()
        elif isinstance(message, PromptListChangedNotification):
            self._prompts_changed()

    def _prompts_changed(self) -> None:
        task = asyncio.create_task(self._relist_prompts(), name=f"mcp:{self.config.name}:prompts")
        self._prompt_listings.add(task)
        task.add_done_callback(self._prompt_listings.discard)

    async def _relist_prompts(self) -> None:
        client = self._client
        if client is None or self._closing.is_set():
            return
        try:
            self.prompts = await _list_prompts(client, fresh=True)
        except Exception as exc:  # keep the prompts we had
            log.warning(
                "MCP server %s: listing prompts failed: %s", self.config.name, describe(exc)
            )
            return
        if self.on_prompts_changed is not None:
            self.on_prompts_changed(self)

    def _tools_changed(self) -> None:
        if self._relisting is not None and not self._relisting.done():
            self._relist_again = True  # one more listing after the running one
            return
        self._relisting = asyncio.create_task(self._relist(), name=f"mcp:{self.config.name}:list")

    async def _relist(self) -> None:
        while True:
            self._relist_again = False
            client = self._client
            if client is None or self._closing.is_set():
                return
            try:
                tools = await _list_tools(client, fresh=True)
            except Exception as exc:  # keep the tools we had
                log.warning(
                    "MCP server %s: listing tools failed: %s", self.config.name, describe(exc)
                )
                return
            if self.on_tools_changed is not None:
                self.on_tools_changed(self, tools)
            if not self._relist_again:
                return

    async def _on_elicit(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        from mcp_types import ElicitResult

        if self.elicit is None:
            return ElicitResult(action="decline")
        try:
            return await self.elicit(self.config.name, params)
        except Exception as exc:  # the server hears a decline, never a hang
            log.warning("MCP server %s: elicitation failed: %s", self.config.name, describe(exc))
            return ElicitResult(action="decline")

    async def _on_list_roots(self, context: ClientRequestContext) -> ListRootsResult:
        """The one root a server may work in: the session's workspace (the
        folder the agent's own tools are confined to)."""
        from mcp_types import ListRootsResult, Root

        uri = self.workspace.resolve().as_uri()
        return ListRootsResult(roots=[Root(uri=uri, name=self.workspace.name)])  # type: ignore[arg-type]

    def _make_client(self, stack: contextlib.AsyncExitStack) -> Client:
        from mcp import Client, StdioServerParameters
        from mcp_types import Implementation

        from flightdeck._version import __version__

        info = Implementation(name="flightdeck", version=__version__)
        hooks: dict[str, Any] = {
            "client_info": info,
            "message_handler": self._on_message,
            "elicitation_callback": self._on_elicit,
            "list_roots_callback": self._on_list_roots,
        }
        if self.config.url is not None:
            # The SDK's documented way to send headers or auth: pass its HTTP client.
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {k: os.path.expandvars(v) for k, v in self.config.headers.items()}
            auth: httpx2.Auth | None = None
            if not any(k.lower() == "authorization" for k in headers):
                from flightdeck.agent.mcp._auth import SignInFlow

                self._flow = SignInFlow(self.config, self.sign_in, self.sign_in_timeout)
                auth = self._flow.auth()
            # the SDK's own defaults: 30 s, and 300 s to read (open SSE streams)
            http = httpx2.AsyncClient(
                headers=headers, auth=auth, timeout=httpx2.Timeout(30.0, read=300.0)
            )
            stack.push_async_callback(http.aclose)  # after the client is left
            transport = streamable_http_client(self.config.url, http_client=http)
            return Client(transport, **hooks)
        params = StdioServerParameters(
            command=self.config.command or "",
            args=list(self.config.args),
            env=dict(self.config.env) or None,
            cwd=self.config.cwd or self.workspace,
        )
        return Client(params, **hooks)


async def _list_tools(client: Client, *, fresh: bool = False) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    while True:
        # after a change, never an answer the client kept from before it
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if fresh else "use")
        for tool in page.tools:
            schema = dict(tool.input_schema or {"type": "object"})
            tools.append(RemoteTool(tool.name, tool.description or tool.title or "", schema))
        cursor = page.next_cursor
        if not cursor:
            return tools


async def _list_prompts(client: Client, *, fresh: bool = False) -> list[Prompt]:
    prompts: list[Prompt] = []
    cursor: str | None = None
    while True:
        page = await client.list_prompts(cursor=cursor, cache_mode="refresh" if fresh else "use")
        prompts.extend(page.prompts)
        if not (cursor := page.next_cursor):
            return prompts


def _sign_in_error(exc: BaseException) -> ConnectionError | None:
    """A coded sign-in failure inside the groups task groups raise, if any."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ConnectionError) and hasattr(exc, "code"):
        return exc
    return None


def describe(exc: BaseException) -> str:
    """A one-line reason, looking inside the exception groups task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
