"""Who may use the page, as Jupyter does it.

- A secret token, new on every start, is in the URL `flightdeck ui` prints.
  The first request that carries it (`?token=`) gets it back as an HttpOnly,
  SameSite=Strict cookie and is redirected to the same URL without it, so the
  token does not linger in the address bar or the history. Every other
  request needs the cookie (or the token) or gets 403 and changes nothing.
- The Host header must name the address the server is bound to or a
  loopback name: a page on another site whose name an attacker re-points at
  127.0.0.1 (DNS rebinding) sends its own name and is refused.
- A write (`POST`) also needs the form's CSRF token, a second per-start
  secret only the pages themselves carry, and, when the browser sends one,
  an `Origin` that is this server's own origin: scheme, host and port, as
  the browser compares them. A page served by another program on the same
  machine (`http://127.0.0.1:<another port>`) is another origin, even
  though its host name is allowed.
- Every response forbids framing (clickjacking), loads code and styles only
  from this server, and sends no Referer (the first URL holds the token).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK = ("127.0.0.1", "localhost", "::1")
HEADERS = [
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
]


@dataclass(frozen=True)
class Secrets:
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    # Cookies ignore ports: two servers on one machine need two names.
    cookie: str = field(default_factory=lambda: "flightdeck_ui_" + secrets.token_hex(4))

    def token_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.token.encode())

    def csrf_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.csrf.encode())


def host_name(header: str) -> str:
    """`[::1]:8000` -> `::1`, `localhost:8000` -> `localhost`."""
    return split_host(header)[0]


def split_host(header: str) -> tuple[str, str | None]:
    """`[::1]:8000` -> (`::1`, `8000`), `localhost` -> (`localhost`, None)."""
    if header.startswith("["):
        if "]" not in header:
            return header, None
        end = header.find("]")
        rest = header[end + 1 :]
        return header[1:end], rest[1:] if rest.startswith(":") else None
    if header.count(":") == 1:
        name, port = header.rsplit(":", 1)
        return name, port
    return header, None


def same_origin(origin: str, host: str) -> bool:
    """Whether an `Origin` header names the origin the request was sent to
    (the page's own `Host`, which the host check has already judged): scheme
    http, the same host name and the same port (80 when none is written).
    The literal `null` (a sandboxed frame, a file: page) is no origin."""
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme.lower() != "http" or "/" in rest:
        return False
    name, port = split_host(rest)
    own_name, own_port = split_host(host)
    return name.lower() == own_name.lower() and (port or "80") == (own_port or "80")


class Guard:
    """ASGI middleware: host check, token or cookie, CSRF on writes."""

    def __init__(self, app: ASGIApp, secrets: Secrets, hosts: frozenset[str], cookie: str) -> None:
        self.app = app
        self.secrets = secrets
        self.hosts = hosts
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self._guarded(scope, receive, send_with_headers)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        refusal = self._refusal(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        token = request.query_params.get("token")
        if token is not None and request.method == "GET":
            # Trade the token in the URL for a cookie; drop it from the URL.
            kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            url = URL(scope=scope).replace(query=urlencode(kept))
            target = url.path + (f"?{url.query}" if url.query else "")
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(
                self.cookie, self.secrets.token, httponly=True, samesite="strict", path="/"
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, request: Request) -> Response | None:
        if host_name(request.headers.get("host", "")) not in self.hosts:
            return PlainTextResponse("refused: unexpected Host header [ui.bad_host]", 403)
        authorised = self.secrets.token_ok(request.cookies.get(self.cookie)) or (
            self.secrets.token_ok(request.query_params.get("token"))
        )
        if not authorised:
            return PlainTextResponse(
                "refused: open the URL `flightdeck ui` printed (it carries the token)"
                " [ui.unauthorised]",
                403,
            )
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            if origin is not None and not same_origin(origin, request.headers.get("host", "")):
                return PlainTextResponse("refused: cross-origin write [ui.csrf]", 403)
        return None
