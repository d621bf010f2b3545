"""Issue 16, item 5: a tool step's egress is exactly what the plan declares.

Servers on loopback that the plan does not name (other ports of a declared
host, ::1, a raw TCP listener, a UDP listener that also answers as DNS) count
every connection or datagram they get; a tool step that tries every way out
must leave all counters at 0, and every proxy decision must name what was
asked. A declared `host:port` and a declared bare host (port 80) both work.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import random
import shutil
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import bwrap_path

from .conftest import Harness, write_plan

needs_bwrap = pytest.mark.skipif(
    bwrap_path() is None or shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") is None,
    reason="needs bubblewrap and a system python3: apt-get install -y bubblewrap python3",
)

_CONTRACT: dict[str, Any] = {
    "credential": {"kind": "none"},
    "effect": "read",
    "idempotency": {"safeToRetry": True},
    "audit": {"fields": ["network-target"]},
}


class _Counted:
    """A loopback listener that counts whatever reaches it."""

    def __init__(self) -> None:
        self.hits = 0
        self.lock = threading.Lock()

    def hit(self) -> None:
        with self.lock:
            self.hits += 1


def _http_server(address: tuple[str, int], family: int = socket.AF_INET) -> Any:
    counter = _Counted()

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            counter.hit()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello from " + self.server.server_address[0].encode())

        def log_message(self, *args: Any) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        address_family = family

    server = Server(address, Hello)
    server.counter = counter  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _tcp_server() -> Any:
    counter = _Counted()

    class Raw(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            counter.hit()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Raw)
    server.counter = counter  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _udp_server() -> Any:
    counter = _Counted()

    class Datagram(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            counter.hit()
            data, sock = self.request
            sock.sendto(data[:2] + b"\x81\x80" + data[4:], self.client_address)

    server = socketserver.ThreadingUDPServer(("127.0.0.1", 0), Datagram)
    server.counter = counter  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def servers() -> Iterator[dict[str, Any]]:
    made = {
        "declared": _http_server(("127.0.0.1", 0)),
        "other_port": _http_server(("127.0.0.1", 0)),
        "raw": _tcp_server(),
        "udp": _udp_server(),
    }
    with contextlib.suppress(OSError):  # no IPv6 loopback here: nothing to escape to either
        made["v6"] = _http_server(("::1", 0), socket.AF_INET6)
    yield made
    for server in made.values():
        server.shutdown()
        server.server_close()


ATTACK = r"""
import json, socket, urllib.request
d = json.load(open('/flightdeck/in/input.json'))['ports']
def proxy(raw):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
    s.sendall(raw)
    try:
        answer = s.recv(200)
        if answer.startswith(b'HTTP/1.1 200'):
            s.sendall(b'GET / HTTP/1.0\r\n\r\n')
            answer += s.recv(200)
    except OSError:
        pass
    s.close()
def attempt(fn):
    try:
        fn()
    except Exception:
        pass
O, R, U, V = d['other_port'], d['raw'], d['udp'], d.get('v6', 9)
for target in [f'127.0.0.1:{O}', f'127.0.0.1:{R}', f'localhost:{O}', f'[::1]:{V}',
               f'127.0.0.1:{d["declared"]}:{O}', f'127.0.0.1:{O}:{d["declared"]}',
               f'x@127.0.0.1:{O}', f'127.1:{O}', f'LOCALHOST.:{O}', f'127.0.0.1:+{O}',
               f'%31%32%37.0.0.1:{O}', f'[::ffff:127.0.0.1]:{O}', '127.0.0.1']:
    attempt(lambda: proxy(f'CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n'.encode()))
for url in [f'http://127.0.0.1:{O}/', f'http://localhost:{O}/', f'http://[::1]:{V}/',
            f'http://127.0.0.1:{d["declared"]}@127.0.0.1:{O}/', f'https://127.0.0.1:{O}/',
            f'http://127.0.0.1:{d["declared"]}:{O}/']:
    attempt(lambda: proxy(f'GET {url} HTTP/1.1\r\nHost: x\r\n\r\n'.encode()))
attempt(lambda: urllib.request.urlopen(f'http://127.0.0.1:{O}/', timeout=5))
for host, port in [('127.0.0.1', O), ('127.0.0.1', R), ('::1', V)]:
    attempt(lambda: socket.create_connection((host, port), timeout=2))
query = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01'
attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(query, ('127.0.0.1', U)))
attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(query, ('127.0.0.1', 53)))
attempt(lambda: socket.getaddrinfo('example.com', 80))
open('/flightdeck/out/report.txt', 'w').write('tried')
"""


def _plan(tmp_path: Path, script: str, hosts: list[str], ports: dict[str, int]) -> Path:
    return write_plan(
        tmp_path,
        environment={"tools": ["python@3.x"]},
        inputs=[{"name": "ports", "type": "object", "resolution": {"rule": "literal"}}],
        outputs=[
            {
                "name": "report.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "report.txt"},
            }
        ],
        steps=[
            {
                "id": "net",
                "kind": "tool",
                "command": ["python3", "-c", script],
                "bindings": {"ports": "inputs.ports"},
                "mount": {"path": "/flightdeck/in"},
                "collect": {"path": "/flightdeck/out"},
                "trustContract": {**_CONTRACT, "hosts": hosts},
                "outputs": ["files"],
                "materializesOutput": "report.txt",
            }
        ],
    )


@needs_bwrap
def test_no_escape_to_undeclared_loopback_servers(
    harness: Harness, tmp_path: Path, servers: dict[str, Any]
) -> None:
    ports = {name: s.server_address[1] for name, s in servers.items()}
    declared = f"127.0.0.1:{ports['declared']}"
    plan = _plan(tmp_path, ATTACK, [declared, "localhost"], ports)
    result = harness.run(plan, inputs={"ports": json.dumps(ports)})
    escapes = {name: s.counter.hits for name, s in servers.items() if name != "declared"}
    assert escapes == dict.fromkeys(escapes, 0)
    assert servers["declared"].counter.hits == 0
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "egress_denied"
    record = harness.records("launch.tool_network")[0]
    assert record["contacted"] == []
    assert record["allowed_endpoints"] == sorted([declared, "localhost:443", "localhost:80"])
    decisions = record["decisions"]
    assert decisions and all(d["decision"] in ("denied", "malformed") for d in decisions)
    by_target = {(d["method"], d["target"]): d for d in decisions}
    other = ports["other_port"]
    assert by_target[("CONNECT", f"127.0.0.1:{other}")] == {
        "method": "CONNECT",
        "target": f"127.0.0.1:{other}",
        "host": "127.0.0.1",
        "port": other,
        "decision": "denied",
        "reason": "not a declared host:port",
    }
    assert by_target[("GET", f"http://localhost:{other}/")]["port"] == other
    assert by_target[("CONNECT", f"LOCALHOST.:{other}")]["host"] == "localhost"
    for target in (
        f"{declared}:{other}",
        f"127.0.0.1:{other}:{ports['declared']}",
        f"x@127.0.0.1:{other}",
        f"127.1:{other}",
        f"127.0.0.1:+{other}",
        f"%31%32%37.0.0.1:{other}",
        "127.0.0.1",
    ):
        assert by_target[("CONNECT", target)]["decision"] == "malformed", target
        assert by_target[("CONNECT", target)]["host"] is None
    assert by_target[("GET", f"https://127.0.0.1:{other}/")]["decision"] == "malformed"
    assert by_target[("CONNECT", f"[::ffff:127.0.0.1]:{other}")]["decision"] == "denied"


FETCH = r"""
import json, socket, urllib.request
d = json.load(open('/flightdeck/in/input.json'))['ports']
out = {}
get = lambda url: urllib.request.urlopen(url, timeout=10).read().decode()
out['port'] = get(f"http://127.0.0.1:{d['declared']}/")
out['bare'] = get(f"http://{d['bare_host']}/")
s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
s.sendall(f"CONNECT 127.0.0.1:{d['declared']} HTTP/1.1\r\n\r\n".encode())
head = s.recv(100)
s.sendall(b'GET / HTTP/1.0\r\n\r\n')
body = b''
while chunk := s.recv(1000):
    body += chunk
out['connect'] = body.decode().rsplit('\r\n\r\n', 1)[-1]
open('/flightdeck/out/report.txt', 'w').write(json.dumps(out))
"""


@needs_bwrap
def test_declared_host_port_and_bare_host_both_work(
    harness: Harness, tmp_path: Path, servers: dict[str, Any]
) -> None:
    # A bare host admits port 80: bind it on a loopback address nobody else uses.
    bare_host = f"127.{random.randint(1, 250)}.{random.randint(1, 250)}.{random.randint(2, 250)}"
    try:
        port80 = _http_server((bare_host, 80))
    except OSError:
        pytest.skip("cannot bind port 80 on loopback here (needs root or CAP_NET_BIND_SERVICE)")
    try:
        ports = {"declared": servers["declared"].server_address[1], "bare_host": bare_host}
        declared = f"127.0.0.1:{ports['declared']}"
        plan = _plan(tmp_path, FETCH, [declared, bare_host.upper() + "."], ports)  # type: ignore[arg-type]
        result = harness.run(plan, inputs={"ports": json.dumps(ports)})
    finally:
        port80.shutdown()
        port80.server_close()
    assert result.status == "completed", result.error
    report = json.loads((tmp_path / "out" / "report.txt").read_text())
    assert report == {
        "port": "hello from 127.0.0.1",
        "bare": f"hello from {bare_host}",
        "connect": "hello from 127.0.0.1",
    }
    record = harness.records("launch.tool_network")[0]
    assert record["contacted"] == sorted({declared, f"{bare_host}:80"})
    assert [d["decision"] for d in record["decisions"]] == ["allowed"] * 3
    assert record["decisions"][1]["reason"] == f"declared {bare_host}:80"


@pytest.mark.parametrize("host", ["127.0.0.1:0", "127.1", "127.0.0.1:99999", "0x7f.0.0.1"])
def test_a_sealed_host_the_proxy_cannot_honour_fails_before_the_tool_runs(
    harness: Harness, tmp_path: Path, host: str
) -> None:
    from flightdeck.launch import StepSettings

    plan = _plan(tmp_path, "open('/flightdeck/out/report.txt', 'w').write('ran')", [host], {})
    result = harness.run(
        plan, inputs={"ports": "{}"}, settings=StepSettings(no_sandbox=True, retry_base_delay=0)
    )
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "egress.bad_host" and repr(host) in result.error.message
    assert not (tmp_path / "out" / "report.txt").exists()
