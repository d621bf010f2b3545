"""Running the app under uvicorn, and telling the user where it is."""

from __future__ import annotations

import socket
import webbrowser
from collections.abc import Callable

from flightdeck.ui._app import UiConfig, create_app
from flightdeck.ui._errors import UiError


def _bind(host: str, port: int) -> socket.socket:
    """Bind before uvicorn starts, so `--port 0` has a known port to print."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UiError(
            "ui.cannot_bind",
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="choose another --port (0 picks a free one)",
        ) from None
    return sock


def serve(
    config: UiConfig,
    port: int = 0,
    *,
    open_browser: bool = True,
    announce: Callable[[str], None] = print,
) -> None:
    import uvicorn

    sock = _bind(config.bound, port)
    with sock:
        # Listen before the URL is printed: a browser or script that opens it at
        # once is queued by the kernel until uvicorn accepts, never refused.
        sock.listen(socket.SOMAXCONN)
        bound_port = sock.getsockname()[1]
        shown = f"[{config.bound}]" if ":" in config.bound else config.bound
        url = f"http://{shown}:{bound_port}/runs?token={config.secrets.token}"
        app = create_app(config)
        announce(f"flightdeck ui: {url}")
        announce("  (the token in this URL is the key to the page; Ctrl-C stops the server)")
        if open_browser:
            webbrowser.open(url)
        server = uvicorn.Server(
            # Open event streams would hold a graceful shutdown for minutes.
            uvicorn.Config(
                app,
                log_level="warning",
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=2,
            )
        )
        server.run(sockets=[sock])
