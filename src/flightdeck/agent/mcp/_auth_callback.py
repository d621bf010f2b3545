"""The loopback listener that receives the authorization server's redirect.

Started when a sign-in begins, on 127.0.0.1 only (RFC 8252 §7.3), and
closed after the first request to its path: single use. The `state` of the
redirect must be the one of the sign-in URL the person was sent to, or the
sign-in fails (a redirect forged by another page must not complete it). It
is a few lines of asyncio rather than a web framework: it answers one GET.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/callback"

_PAGE = (
    "<!doctype html><meta charset=utf-8><title>flightdeck</title>"
    "<p>{text}</p><p>You can close this tab.</p>"
)


class SignInError(ConnectionError):
    """A sign-in that did not complete, with a stable code."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.message} [{self.code}]{hint}"


def free_port() -> int:
    """A port free now on 127.0.0.1, for a new registration's redirect URI."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redirect_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


class Callback:
    """One sign-in's listener: `start(state)`, then `wait(timeout)` for the
    code (or a `SignInError`)."""

    def __init__(self, server: str, port: int) -> None:
        self.server = server
        self.port = port
        self._state = ""
        self._result: asyncio.Future[tuple[str, str, str | None]] | None = None
        self._listener: asyncio.Server | None = None
        self.ended = asyncio.Event()  # the redirect came (or the sign-in failed)

    async def start(self, state: str) -> None:
        self._state = state
        self._result = asyncio.get_running_loop().create_future()
        self._result.add_done_callback(lambda _: self.ended.set())
        self.ended.clear()
        try:
            self._listener = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        except OSError as exc:
            raise SignInError(
                "mcp.auth_callback",
                f"MCP server {self.server}: cannot listen for the sign-in redirect on "
                f"127.0.0.1:{self.port}: {exc.strerror or exc}",
                "free the port, or delete the server's file under the data directory's "
                "mcp-auth folder to register again on a new port",
            ) from None

    async def wait(self, timeout: float) -> tuple[str, str, str | None]:
        """(code, state, iss) of the redirect."""
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise SignInError(
                "mcp.auth_timeout",
                f"MCP server {self.server}: nobody signed in within {timeout:g} s",
                "raise [mcp] sign_in_timeout, or start the agent again to get a new sign-in URL",
            ) from None
        finally:
            await self.close()

    def refuse(self, who: str) -> None:
        """The person declined where the URL was shown: the sign-in ends now."""
        if self._result is not None and not self._result.done():
            self._result.set_exception(
                SignInError(
                    "mcp.auth_refused",
                    f"MCP server {self.server}: the sign-in was declined {who}",
                    "accept the sign-in request when it is shown",
                )
            )

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(listener.wait_closed(), 1.0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10.0)
            parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            target = parts[1] if len(parts) == 3 and parts[0] == "GET" else ""
            status, text = self._answer(target)
            body = _PAGE.format(text=text).encode("utf-8")
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("ascii")
                + body
            )
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _answer(self, target: str) -> tuple[str, str]:
        """Settle the sign-in from the first request to the callback path."""
        split = urlsplit(target)
        result = self._result
        if split.path != CALLBACK_PATH or result is None or result.done():
            return "404 Not Found", "Not a sign-in in progress."
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        state = query.get("state", "")
        if not secrets.compare_digest(state.encode(), self._state.encode()):
            result.set_exception(
                SignInError(
                    "mcp.auth_state",
                    f"MCP server {self.server}: the sign-in redirect carried a state that "
                    "is not the one of the sign-in URL",
                    "start the sign-in again from the URL the agent gave",
                )
            )
            return "400 Bad Request", "This redirect does not belong to the sign-in."
        if "error" in query:
            reason = query.get("error_description") or query["error"]
            result.set_exception(
                SignInError(
                    "mcp.auth_refused",
                    f"MCP server {self.server}: the sign-in was refused: {reason}",
                    "sign in again and allow access",
                )
            )
            return "200 OK", "Sign-in refused."
        code = query.get("code", "")
        if not code:
            result.set_exception(
                SignInError(
                    "mcp.auth_refused",
                    f"MCP server {self.server}: the sign-in redirect carried no code",
                )
            )
            return "400 Bad Request", "No authorization code."
        result.set_result((code, state, query.get("iss")))
        return "200 OK", "Signed in to the MCP server."
