"""A real HTTP server on loopback that plays scripted turns in the Anthropic
and OpenAI wire formats (SSE when `stream` is true, JSON otherwise).

Each POST consumes the next turn; when the script runs out the server answers
with a plain "done" text turn. Responses use chunked transfer encoding like
the real APIs, so a turn cut mid-stream ends in an incomplete chunked body.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType, TracebackType
from typing import Any

from tests.fakes import _anthropic_wire, _openai_wire
from tests.fakes._script import Turn

_FLUSH_BYTES = 16384


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    peer: tuple[str, int] | None = None  # the client's address: one per connection


def _wire_for(path: str) -> ModuleType | None:
    path = path.split("?", 1)[0]
    if path.endswith("/chat/completions"):
        return _openai_wire
    # Vertex AI puts the Anthropic format behind `...:streamRawPredict`.
    if path.endswith("/messages") or path.endswith(("RawPredict", "rawPredict")):
        return _anthropic_wire
    return None


class FakeLLMServer:
    """Scripted fake of the Anthropic and OpenAI HTTP APIs on 127.0.0.1.

    `api_key`, when set, makes requests without that key (`x-api-key` or
    `Authorization: Bearer`) fail with 401.
    """

    def __init__(
        self, turns: Iterable[Turn] = (), *, api_key: str | None = None, port: int = 0
    ) -> None:
        self._turns = list(turns)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.api_key = api_key
        self.received: list[RecordedRequest] = []
        # Requests to paths the fake does not serve ("GET /api/hello"), answered 404:
        # a client under test (a peer CLI in bench/) may call more than /messages.
        self.unknown: list[str] = []
        self._httpd = _QuietServer(("127.0.0.1", port), _handler_class(self))
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------

    def start(self) -> FakeLLMServer:
        # A short poll interval keeps close() (which waits one poll) quick in tests.
        serve = functools.partial(self._httpd.serve_forever, poll_interval=0.02)
        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ---- script and observations -------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Base URL for the Anthropic SDK; the OpenAI SDK wants `base_url + "/v1"`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received so far, in order."""
        with self._lock:
            return [r.body for r in self.received]

    def add(self, *turns: Turn) -> None:
        """Append turns to the script (also while serving)."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    def _take(self, request: RecordedRequest) -> Turn:
        with self._lock:
            self.received.append(request)
            return self._turns.pop(0) if self._turns else Turn(text="done")

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return given == self.api_key


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client dropping a keep-alive connection is normal, not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_class(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean."""

    def do_GET(self) -> None:
        self._no_route()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        wire = _wire_for(self.path)
        if wire is None:
            self._no_route()
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, wire.error_body(400, "body is not JSON"))
            return
        if not self.fake._authorized(headers):
            self._send_json(401, wire.error_body(401, "invalid x-api-key"))
            return
        peer = (str(self.client_address[0]), int(self.client_address[1]))
        turn = self.fake._take(RecordedRequest(self.path, headers, body, peer))
        if turn.delay and self.fake._stopping.wait(turn.delay):
            return
        self._answer(wire, turn, body)

    def _no_route(self) -> None:
        with self.fake._lock:
            self.fake.unknown.append(f"{self.command} {self.path}")
        self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def _answer(self, wire: ModuleType, turn: Turn, body: dict[str, Any]) -> None:
        model = str(body.get("model", "fake-model"))
        try:
            if turn.error is not None:
                extra = {"retry-after": "0"} if turn.error == 429 else {}
                self._send_json(turn.error, wire.error_body(turn.error, turn.error_message), extra)
            elif body.get("stream"):
                self._send_stream(wire, turn, model)
            else:
                self._send_json(200, wire.message_body(turn, model))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (stop / cancel)

    def _send_json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, wire: ModuleType, turn: Turn, model: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pending = bytearray()
        for event in _limited(wire.stream_events(turn, model), turn.cut_after):
            pending += event
            if turn.delta_delay or len(pending) >= _FLUSH_BYTES:
                self._write_chunk(bytes(pending))
                pending.clear()
            if turn.delta_delay and self.fake._stopping.wait(turn.delta_delay):
                return
        if turn.cut_after is not None and turn.stream_error:
            pending += wire.stream_error(turn.stream_error, turn.error_message)
        self._write_chunk(bytes(pending))
        if turn.cut_after is not None and not turn.clean_cut:
            self._cut()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def _cut(self) -> None:
        """Drop the connection without finishing the chunked body."""
        self.close_connection = True
        self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _limited(events: Iterator[bytes], limit: int | None) -> Iterator[bytes]:
    for count, event in enumerate(events):
        if limit is not None and count >= limit:
            return
        yield event
