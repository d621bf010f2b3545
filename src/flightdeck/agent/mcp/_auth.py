"""OAuth for a streamable-HTTP MCP server: the SDK's `OAuthClientProvider`
(an httpx Auth: discovery, dynamic client registration, PKCE, token
exchange and refresh) with flightdeck's three parts plugged in:

- storage: `TokenFile`, one 0600 file per server URL in the data directory;
- redirect: the sign-in URL goes to whoever can show it to a person (the
  `sign_in` hook: a `mcp_auth_required` event, or an ACP elicitation); with
  no one to show it to, the connection fails with `mcp.auth_required`;
- callback: a single-use loopback listener (`Callback`) that checks `state`.

A server that never answers 401 costs one file lookup: the provider does
nothing until it is challenged. Imported only when an HTTP server connects.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from flightdeck.agent.mcp._auth_callback import Callback, SignInError, free_port, redirect_uri
from flightdeck.agent.mcp._auth_store import TokenFile
from flightdeck.agent.mcp._config import McpServerConfig

if TYPE_CHECKING:
    import httpx2
    from mcp.shared.auth import AuthorizationCodeResult

# (server name, sign-in URL, its callback): tell a person to open the URL.
# The callback's `refuse(who)` ends the sign-in when they decline where it
# was shown; its `ended` event is set when the browser came back.
SignIn = Callable[[str, str, Callback], None]


class _QuietFlowErrors(logging.Filter):
    """The SDK logs a failed OAuth flow with its traceback before raising it;
    flightdeck reports the raised error itself, with a code."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "OAuth flow error"


logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietFlowErrors())


class SignInFlow:
    """One server's OAuth state for one connection."""

    def __init__(self, config: McpServerConfig, sign_in: SignIn | None, timeout: float) -> None:
        assert config.url is not None
        self.config = config
        self.sign_in = sign_in
        self.timeout = timeout
        self.store = TokenFile(config.url)
        # A registration's redirect URI names its port: reuse it while the
        # registration lasts; a new registration gets a free one.
        port = self.store.redirect_port or free_port()
        self.store.remember_port(port)
        self.redirect_uri = redirect_uri(port)
        self._callback = Callback(config.name, port)
        self.waiting = False  # a person is signing in: start-up's timeout is paused
        self.signed_in = asyncio.Event()  # set when the sign-in ends, either way
        self.error: SignInError | None = None  # why the sign-in failed, for the report

    def auth(self) -> httpx2.Auth:
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import OAuthClientMetadata
        from pydantic import AnyUrl

        store = self.store

        class Provider(OAuthClientProvider):
            async def _initialize(self) -> None:
                # The SDK loads stored tokens without their expiry, so an
                # expired one would be sent, refused, and a new sign-in asked
                # for; with the expiry known it is refreshed instead.
                await super()._initialize()
                if self.context.current_tokens is not None:
                    self.context.token_expiry_time = store.expires_at

        metadata = OAuthClientMetadata(
            client_name="flightdeck",
            redirect_uris=[AnyUrl(self.redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        assert self.config.url is not None
        return Provider(
            server_url=self.config.url,
            client_metadata=metadata,
            storage=store,
            redirect_handler=self._redirect,
            callback_handler=self._receive,
        )

    async def _redirect(self, url: str) -> None:
        name = self.config.name
        if self.sign_in is None:
            self.error = SignInError(
                "mcp.auth_required",
                f"MCP server {name} ({self.config.url}) needs a sign-in and no client "
                "is connected to show its URL",
                "start the agent from a host (--json-stream or --acp) once to sign in; "
                "the token is kept for later starts",
            )
            raise self.error
        state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        try:
            await self._callback.start(state)
        except SignInError as exc:
            self.error = exc
            raise
        self.waiting = True
        self.signed_in.clear()
        self.sign_in(name, url, self._callback)

    async def _receive(self) -> AuthorizationCodeResult:
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            code, state, iss = await self._callback.wait(self.timeout)
        except SignInError as exc:
            self.error = exc
            raise
        finally:
            self.waiting = False
            self.signed_in.set()
        return AuthorizationCodeResult(code=code, state=state, iss=iss)

    async def close(self) -> None:
        await self._callback.close()
